import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

const CHUNKS = 4;
const QUESTIONS = 6;

/**
 * chat.postMessage's own limit: about one message a second per channel (Slack's docs), with a
 * short burst. Several long answers at once in one channel meet it: every billed answer must be
 * posted whole, once, without the waiting replies all asking again each second.
 */
describe('Slack: answers posted under the per-channel post limit', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      // A small retry budget (JOB_ATTEMPTS=2: 8 rate limits) shows the give-ups the old code had.
      env: { JOB_ATTEMPTS: '2' },
      agent: { reply: (_id, message) => Array.from({ length: CHUNKS }, (_, i) => `Part ${i} of ${message}. ${'word '.repeat(700)}`).join('\n\n') },
    });
  });
  afterAll(async () => h?.close());

  it(`${QUESTIONS} answers of ${CHUNKS} messages at once in one channel: each posted whole and in order, none given up, the agent called once each`, async () => {
    h.slack.limitPosts({ perChannelMs: 1_000, burst: 3 });
    const asked = await Promise.all(Array.from({ length: QUESTIONS }, (_, i) => say(h, { channel: W.general, text: `${botMention(h)} q${i}` })));
    const postsOf = (ts: string) => h.slack.posted((c) => c.params.thread_ts === ts);
    const settled = () => asked.every((m) => postsOf(m.ts).length === CHUNKS || logLines(h, /gave up on a message/).some((l) => String(l.messageId).endsWith(m.ts)));
    await until(settled, 'every answer posted or given up', 90_000);
    expect(logLines(h, /gave up on a message/)).toEqual([]);
    for (const [i, m] of asked.entries()) {
      expect(postsOf(m.ts).map((c) => (c.params.text ?? '').slice(0, 12))).toEqual(Array.from({ length: CHUNKS }, (_, k) => `Part ${k} of q${i}`));
      expect(chatCalls(h).filter((c) => (c.json as { message?: string }).message === `q${i}`)).toHaveLength(1);
    }
    // Waiting replies go in line after a 429 instead of all asking again each second.
    const refused = h.slack.callsOf('chat.postMessage', (c) => c.status === 429).length;
    expect(refused).toBeLessThanOrEqual(2 * QUESTIONS * CHUNKS);
  }, 120_000);
});
