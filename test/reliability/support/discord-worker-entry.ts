/**
 * A worker process that answers on Discord: `ROLE=worker` from its environment with only the
 * Discord reply port (DISCORD_TOKEN, DISCORD_API_URL → the emulator). Prints "ready" once it
 * takes jobs. Crash tests SIGKILL it mid-post.
 */
import { discordPlatform } from '../../../adapters/discord/index.js';
import { loadTestConfig } from '../../support/config.js';
import { startBridge } from '../../../src/app.js';

import { createLogger, secrets } from '../../../src/logger.js';

const config = loadTestConfig();
const logger = createLogger({ level: config.logLevel, registry: secrets, pretty: false });
const bridge = await startBridge({ config, logger, secrets, platforms: [discordPlatform] });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void bridge.stop().then(() => process.exit(0)));
