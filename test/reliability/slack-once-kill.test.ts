import { describe, expect, it } from 'vitest';
import { botMention, say, W } from '../slack/harness.js';
import { slackKillSuite } from './support/kill-suite.js';

/**
 * Exactly once at the worst moment, on Slack: a worker process is SIGKILLed after Slack stored
 * its post and before the answer reached it (the emulator holds that answer), and the worker
 * that takes the job over must not say it again. Two posts the reply chunks' metadata lookup
 * did not cover: a give-up notice (the agent refused the message), and a chunk Slack took only
 * without its metadata (it refused the metadata, so the bridge posted the text alone).
 */
// Ingress only in this process (Bolt over HTTP); worker processes answer.
const suite = slackKillSuite({ agent: { reply: (_id, m) => `echo: ${m}` } });
const { guard } = suite;

/**
 * Asks `text` in #general with the answer of the post matching `held` held back, SIGKILLs the
 * worker there and starts another; resolves once that one made the `done` call on the question (the reaction that ends it).
 */
async function killMidPost(text: string, held: (params: Record<string, string>) => boolean, done: { method: string; name?: string }) {
  const hs = suite.h;
  const first = await suite.spawnWorker();
  hs.slack.hold('chat.postMessage', { filter: held });
  const m = await say(hs, { channel: W.general, text: `${botMention(hs)} ${text}` });
  const call = await hs.slack.waitForHeld('chat.postMessage', 30_000);
  expect(call.call.params.thread_ts).toBe(m.ts);
  // Slack has the post; the worker never hears so.
  await first.kill9();
  await suite.spawnWorker();
  await hs.slack.waitForCall(done.method, (c) => c.params.timestamp === m.ts && (done.name === undefined || c.params.name === done.name), 30_000);
  await suite.endRound();
  const bot = hs.slack.thread(W.general, m.ts).filter((x) => x.user === hs.slack.identity.botUserId);
  return { bot, calls: hs.agent.chatCalls().filter((c) => c.message.includes(text)) };
}

describe('Slack: a worker SIGKILLed right after Slack stored its post', () => {
  it('a give-up notice is in the thread once, and the agent was asked once', async () => {
    suite.h.agent.failNext(1, { status: 422, body: { error: 'instance refused the message' } }, { endpoint: 'chat' });
    const { bot, calls } = await killMidPost('refused question', (p) => /\(ref [A-Z2-9]{6}\)/.test(p.text ?? ''), { method: 'reactions.add', name: 'warning' });
    expect(bot).toHaveLength(1);
    expect(bot[0]!.text).toMatch(/\(ref [A-Z2-9]{6}\)$/);
    expect(calls).toHaveLength(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);

  it('a chunk Slack took only without its metadata is in the thread once, and the agent was asked once', async () => {
    // Slack refuses the first post's metadata; the bridge posts the chunk without it (held).
    suite.h.slack.fail('chat.postMessage', { error: 'metadata_too_large' });
    const { bot, calls } = await killMidPost('metadata question', (p) => p.metadata === undefined && (p.text ?? '').startsWith('echo: metadata'), { method: 'reactions.remove' });
    expect(bot.map((x) => x.text)).toEqual(['echo: metadata question']);
    expect(bot[0]!.metadata).toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);
});
