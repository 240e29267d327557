/**
 * A Slack ingress process as `npm start` runs it with `ROLE=ingress`: Bolt over HTTP (on its
 * own HTTP_PORT) or Socket Mode, from its environment only. Prints "ready <port>" once Slack
 * can reach it, so a test can run several replicas side by side.
 */
import { slackPlatform } from '../../../adapters/slack/index.js';
import { loadTestConfig } from '../../support/config.js';
import { startBridge } from '../../../src/app.js';

import { createLogger, secrets } from '../../../src/logger.js';

const config = loadTestConfig();
const logger = createLogger({ level: config.logLevel, registry: secrets, pretty: false });
const bridge = await startBridge({ config, logger, secrets, platforms: [slackPlatform] });
process.stdout.write(`ready ${bridge.httpPort}\n`);
process.on('SIGTERM', () => void bridge.stop().then(() => process.exit(0)));
