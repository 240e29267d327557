import { describe, expect, it } from 'vitest';
import { REPLY_EVENT_TYPE } from '../../adapters/slack/posted-chunks.js';
import { renderSlackReply } from '../../adapters/slack/render.js';
import { botMention, say, W } from '../slack/harness.js';
import { slackKillSuite } from './support/kill-suite.js';
import { figures } from './support/ledger.js';

/**
 * Issue 12 item 1: the worker is SIGKILLed after Slack stored a reply chunk and before its
 * answer arrived (the emulator holds that answer). The worker that takes over finds the chunk
 * by its metadata and posts only what is missing: each chunk is in the thread exactly once,
 * and the agent is asked once per message.
 */
const paragraph = (word: string) => `${word} `.repeat(400).trim();
const LONG = ['alpha', 'bravo', 'charlie'].map(paragraph).join('\n\n');

// Ingress only in this process (Bolt over HTTP); the answering is done by worker processes.
const suite = slackKillSuite({ agent: { reply: (_id, m) => (m.includes('long') ? LONG : `echo: ${m}`) } });
const { guard } = suite;

/** Asks in #general; holds the answer of the post that starts with `heldText`, kills the worker there, restarts it. */
async function killMidPost(text: string, heldText: string) {
  const hs = suite.h;
  const first = await suite.spawnWorker();
  hs.slack.hold('chat.postMessage', { filter: (p) => (p.text ?? '').startsWith(heldText) });
  const m = await say(hs, { channel: W.general, text: `${botMention(hs)} ${text}` });
  const held = await hs.slack.waitForHeld('chat.postMessage', 30_000);
  expect(held.call.params.thread_ts).toBe(m.ts);
  // Slack has the chunk; the worker never hears so.
  await first.kill9();
  const killedAt = Date.now();
  await suite.spawnWorker();
  const restartedAt = Date.now();
  // The worker that took over finished: it removes the working reaction last.
  const done = await hs.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === m.ts, 30_000);
  figures(`slack-post-kill-${text.split(' ')[0]}`, {
    workerStartMs: restartedAt - killedAt,
    answeredAfterRestartMs: done.at - restartedAt,
    lookups: hs.slack.callsOf('conversations.replies', (c) => c.params.ts === m.ts && c.params.include_all_metadata === 'true').length,
  });
  await suite.endRound();
  const bot = hs.slack.thread(W.general, m.ts).filter((x) => x.user === hs.slack.identity.botUserId);
  return { m, bot, calls: hs.agent.chatCalls().filter((c) => c.message.includes(text)) };
}

describe('Slack: the worker dies after Slack stored a post and before its answer came', () => {
  it('a short reply is in the thread once, and the agent was asked once', async () => {
    const { bot, calls } = await killMidPost('short question', 'echo: short');
    expect(bot.map((x) => x.text)).toEqual(['echo: short question']);
    expect(bot.map((x) => x.metadata)).toEqual([{ event_type: REPLY_EVENT_TYPE, event_payload: { message_id: expect.any(String), chunk: 0 } }]);
    expect(calls).toHaveLength(1);
    // The worker that took over read the thread back before deciding.
    expect(suite.h.slack.callsOf('conversations.replies', (c) => c.params.include_all_metadata === 'true').length).toBeGreaterThanOrEqual(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);

  it('a three-chunk reply killed while posting chunk 2: every chunk once, in order; the agent asked once', async () => {
    const { bot, calls } = await killMidPost('long question', 'bravo');
    const expected = renderSlackReply(LONG);
    expect(expected).toHaveLength(3);
    expect(bot.map((x) => x.metadata?.event_payload.chunk)).toEqual([0, 1, 2]);
    expect(bot.map((x) => x.text)).toEqual(expected);
    expect(calls).toHaveLength(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);
});
