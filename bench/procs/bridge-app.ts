/**
 * A bridge process with the platforms its config names (bin/platforms.ts), as `npm start`
 * runs it: the Slack ingress of scenario 5 (`ROLE=ingress`) and the idle `ROLE=all` process of
 * scenario 6.
 */
import { platformsFor } from '../../bin/platforms.js';
import { loadTestConfig } from '../../test/support/config.js';
import { startBridge } from '../../src/app.js';

import { ready, serve } from '../lib/ipc.js';
import { exitSoon, probeHandlers } from './probe.js';

const config = loadTestConfig({ ...process.env });
const bridge = await startBridge({ config, platforms: await platformsFor(config) });

serve({
  ...probeHandlers(),
  stop: async () => {
    await bridge.stop();
    exitSoon();
  },
});
ready({ httpPort: bridge.httpPort });
