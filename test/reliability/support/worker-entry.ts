/**
 * A worker process for the fault suite: `ROLE=worker` from its environment, posting replies
 * to the sink at SINK_URL, logging JSON to stdout. Prints "ready" once it takes jobs and
 * shuts down in order on SIGTERM (as bin/agent-bridge.ts does).
 */
import { startBridge } from '../../../src/app.js';
import { loadTestConfig } from '../../support/config.js';

import { createLogger, secrets } from '../../../src/logger.js';
import { sinkPlatform } from '../../support/sink.js';

const config = loadTestConfig();
const logger = createLogger({ level: config.logLevel, registry: secrets, pretty: false });
const bridge = await startBridge({ config, logger, secrets, platforms: [sinkPlatform(process.env.SINK_URL ?? '')] });
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  const started = Date.now();
  void bridge.stop().then(() => {
    process.stdout.write(`stopped after ${Date.now() - started} ms\n`);
    process.exit(0);
  });
});
