/**
 * A bridge worker process (`ROLE=worker`, configured from its environment like production)
 * whose reply port posts to the bench sink at BENCH_SINK_URL.
 */
import { startBridge } from '../../src/app.js';
import { loadTestConfig } from '../../test/support/config.js';

import { sinkPlatform } from '../../test/support/sink.js';
import { ready, serve } from '../lib/ipc.js';
import { exitSoon, probeHandlers } from './probe.js';

const config = loadTestConfig({ ...process.env });
const bridge = await startBridge({ config, platforms: [sinkPlatform(process.env.BENCH_SINK_URL ?? '')] });

serve({
  ...probeHandlers(),
  stop: async () => {
    await bridge.stop();
    exitSoon();
  },
});
ready({ httpPort: bridge.httpPort });
