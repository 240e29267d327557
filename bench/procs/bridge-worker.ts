/**
 * A bridge worker process (`ROLE=worker`, configured from its environment like production)
 * whose reply port posts to the bench sink at BENCH_SINK_URL.
 */
import { sinkPlatform } from '../../test/support/sink.js';
import { serveBridge } from './serve-bridge.js';

await serveBridge(() => [sinkPlatform(process.env.BENCH_SINK_URL ?? '')]);
