import { afterEach, describe, expect, it } from 'vitest';
import { pushWithoutJob, startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

describe('the sweep for stranded conversations', () => {
  it('a message accepted while workers run, whose job was never queued (ingress died in between), is answered within seconds', async () => {
    p = await startPipeline({ LOG_LEVEL: 'info' });
    const pl = p;
    // Workers are up and swept at start; then ingress accepts a message and dies before queueing its job.
    const m = webMessage('stranded while everything runs');
    await pushWithoutJob(pl, m);
    // Listed 10 s after it was accepted, swept every 5 s: about 15 s (it was 5 minutes). The
    // deadline leaves room for a machine busy with other work; it still fails a minutes-long sweep.
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId), 40_000);
    expect(pl.agent.chatCalls()).toHaveLength(1);
    expect(pl.logs.text).toContain('woke a conversation whose messages had no job');
  }, 60_000);
});
