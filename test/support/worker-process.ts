/**
 * A worker process for crash tests: `ROLE=worker` configured from its environment, posting
 * replies to the sink at SINK_URL. Prints "ready" once it takes jobs. CLOCK_SKEW_MS sets its
 * clock off (skewed-clock.ts).
 */
import './skewed-clock.js';
import { startBridge } from '../../src/app.js';
import { loadTestConfig } from './config.js';

import { sinkPlatform } from './sink.js';

const config = loadTestConfig();
const bridge = await startBridge({ config, platforms: [sinkPlatform(process.env.SINK_URL ?? '')] });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void bridge.stop().then(() => process.exit(0)));
