import { afterEach, describe, expect, it } from 'vitest';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';

/**
 * The working indicator (Slack :eyes:, Discord typing, the playground's note) runs beside the
 * agent call: it never holds up the call or the reply, and with WORKING_INDICATOR_DELAY_MS it
 * shows only for answers slower than that.
 */
let p: Pipeline | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

const kindsFor = (pl: Pipeline, messageId: string) => pl.sink.posts.filter((x) => x.messageId === messageId).map((x) => x.kind);

describe('the working indicator', () => {
  it('with a delay: a fast answer gets no indicator, a slow one shows it while the agent works and takes it down after the reply', async () => {
    p = await startPipeline({ WORKING_INDICATOR_DELAY_MS: '400' }, { indicators: true });
    const pl = p;
    const fast = webMessage('fast');
    await pl.bridge.ingress.handle(fast);
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === fast.messageId && x.kind === 'chunk'));

    pl.agent.setDelay(2_000, { endpoint: 'chat' });
    const slow = webMessage('slow', { channelId: 'c2' });
    await pl.bridge.ingress.handle(slow);
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === slow.messageId && x.kind === 'done'), 20_000);
    // The fast one's reply is all there is for it: no indicator was shown, so none is taken down.
    expect(kindsFor(pl, fast.messageId)).toEqual(['chunk']);
    expect(kindsFor(pl, slow.messageId)).toEqual(['working', 'chunk', 'done']);
  });

  it('at once (the default): shown before the reply, and a platform call for it that hangs holds up neither the agent call nor the reply', async () => {
    p = await startPipeline({}, { indicators: true });
    const pl = p;
    // The first post of the message is its indicator: it never gets an answer.
    pl.sink.fail('hang');
    const m = webMessage('hello');
    await pl.bridge.ingress.handle(m);
    await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId && x.kind === 'chunk'), 15_000);
    expect(pl.agent.chatCalls()).toHaveLength(1);
    // The hung indicator post was never accepted; the reply was.
    expect(kindsFor(pl, m.messageId)[0]).toBe('chunk');
  });
});
