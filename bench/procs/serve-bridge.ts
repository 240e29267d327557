import { startBridge } from '../../src/app.js';
import type { Config } from '../../src/config/load.js';
import type { PlatformModule } from '../../src/core/platform-context.js';
import { loadTestConfig } from '../../test/support/config.js';
import { ready } from '../lib/ipc.js';
import { serveProbesUntilStop } from './probe.js';

/**
 * Starts a bridge configured from this process's environment, like production, with the given
 * platforms; answers the bench's probes, stops on request, and reports its HTTP port when ready.
 */
export async function serveBridge(platformsFor: (config: Readonly<Config>) => Promise<PlatformModule[]> | PlatformModule[]): Promise<void> {
  const config = loadTestConfig({ ...process.env });
  const bridge = await startBridge({ config, platforms: await platformsFor(config) });
  serveProbesUntilStop(() => bridge.stop());
  ready({ httpPort: bridge.httpPort });
}
