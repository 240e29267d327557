import { afterEach, describe, expect, it } from 'vitest';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

/**
 * SHUTDOWN_TIMEOUT_MS runs out with a job in flight (audit D3): the job is not handed back at
 * once, it keeps its lock until that lapses. The log line says so, and when it is picked up.
 */
let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

describe('a shutdown that times out with a job in flight', () => {
  it('logs that the job stays locked and is picked up within about the lock duration and the stalled interval', async () => {
    p = await startPipeline({ SHUTDOWN_TIMEOUT_MS: '200', WORKER_LOCK_DURATION_MS: '4000', WORKER_STALLED_INTERVAL_MS: '3000' });
    const pl = p;
    pl.agent.hangNext(1, { endpoint: 'chat' });
    await pl.bridge.ingress.handle(webMessage('never answered before the stop'));
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    await pl.bridge.stop();
    const [line] = pl.logs.matching(/did not finish in time/);
    expect(line).toMatchObject({ timeoutMs: 200, lockDurationMs: 4000, stalledIntervalMs: 3000 });
    expect(line!.msg).toMatch(/stay locked.*picks them up once their locks lapse, within about WORKER_LOCK_DURATION_MS \+ WORKER_STALLED_INTERVAL_MS/);
    expect(line!.msg).not.toMatch(/returning them to the queue/);
  }, 20_000);
});
