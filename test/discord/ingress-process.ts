/**
 * A Discord ingress process for the multi-process shard test: configured from its environment
 * (DISCORD_SHARD_IDS, DISCORD_SHARD_COUNT, …), logs as JSON on stdout, and prints
 * "ready <http port>" once its shards are connected.
 */
import { startBridge } from '../../src/app.js';
import { loadTestConfig } from '../support/config.js';

import { discordPlatform } from '../../adapters/discord/index.js';

const config = loadTestConfig();
const bridge = await startBridge({ config, platforms: [discordPlatform] });
process.stdout.write(`ready ${bridge.httpPort}\n`);
process.on('SIGTERM', () => void bridge.stop().then(() => process.exit(0)));
