/**
 * Captures what an earlier release leaves in Redis for the upgrade test
 * (upgrade-queued.test.ts). Not a test of this tree (no .test.ts): it is copied into a worktree
 * of the release to capture, where its imports resolve to that release's code:
 *
 *   git worktree add --detach /tmp/wt-old <commit> && ln -s $PWD/node_modules /tmp/wt-old/
 *   cp test/reliability/upgrade-capture.ts /tmp/wt-old/test/reliability/capture.test.ts
 *   (cd /tmp/wt-old && CAPTURE_TO=/tmp/slack-queue-<commit>.json npx vitest run test/reliability/capture.test.ts)
 *
 * The old bridge (Slack emulator, one worker slot per message held mid-flight) is stopped in
 * the middle of six messages, one per state a restart can find, and every key under its prefix
 * is dumped as the worker left it (its job locks still held: as after a SIGKILL, or a rolling
 * deploy's cut-off). CAPTURE_SKIP=gaveUp leaves out the give-up held mid-post, for a release
 * from before give-ups were recorded (3bca6ee): it has no mark to capture. The file goes to
 * test/fixtures/upgrade/ and its commit into RELEASES of upgrade-queued.test.ts. CAPTURE_EDITS=1
 * adds a question edited and one deleted while they wait (for releases that honour both).
 */
import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { botMention, say, startSlackBridge, until, W } from '../slack/harness.js';

/** A reply of two Slack chunks (over 3,800 characters). */
const LONG = (m: string) => `first part of ${m}\n\n${'x'.repeat(3_000)}\n\n${'y'.repeat(3_000)}\n\nend of ${m}`;

const skip = new Set((process.env.CAPTURE_SKIP ?? '').split(',').filter(Boolean));

it('captures an old release stopped mid-flight', async () => {
  // A slot for each held message (in flight, answered, chunked, given up): the last one waits.
  const slots = skip.has('gaveUp') ? 3 : 4;
  const h = await startSlackBridge({
    mode: 'http',
    env: { WORKER_CONCURRENCY: String(slots), LOG_LEVEL: 'warn' },
    agent: {
      reply: async (_id, m) => {
        // The call in flight when the release stops: never answered.
        if (m.includes('in flight')) await new Promise<never>(() => {});
        return m.includes('long') ? LONG(m) : `echo: ${m}`;
      },
    },
  });
  const asked: Array<{ label: string; channel: string; text: string; ts: string; threadOf?: string }> = [];
  const ask = async (label: string, text: string, threadOf?: string) => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} ${text}`, threadTs: threadOf ? asked.find((a) => a.label === threadOf)!.ts : undefined });
    asked.push({ label, channel: W.general, text: `${botMention(h)} ${text}`, ts: m.ts, ...(threadOf ? { threadOf } : {}) });
    return m;
  };
  const chats = () => h.agent.chatCalls();
  try {
    // 1. "in flight": its agent call started and never came back.
    await ask('inFlight', 'question in flight');
    await until(() => chats().length === 1, 'the call in flight');
    // 2. "waiting behind": in the same thread, queued behind the call in flight (no job of its own).
    await ask('behind', 'question waiting behind', 'inFlight');
    if (process.env.CAPTURE_EDITS) {
      // 2b. Its sender edited it while it waited, and another was deleted (releases that honour
      // both: their records are what an older release would read in a rolling deploy).
      const msgs = `${h.prefix}:chat:conv:slack:${h.slack.identity.teamId}:${W.general}:${asked[0]!.ts}:msgs`;
      const redis = new Redis('redis://127.0.0.1:6379');
      const edited = await ask('edited', 'question before its edit', 'inFlight');
      await h.to.event(h.slack.editMessage(W.general, edited.ts, `${botMention(h)} question after its edit`));
      const deleted = await ask('deleted', 'question deleted', 'inFlight');
      await h.to.event(h.slack.deleteMessage(W.general, deleted.ts));
      await until(async () => (await redis.hget(msgs, `${W.general}:${edited.ts}`))?.includes('after its edit') && (await redis.hexists(msgs, `${W.general}:${deleted.ts}:gaveUp`)), 'the edit and the deletion stored');
      await redis.quit();
    }
    // 3. "answered, not posted": its answer recorded, its post held by Slack.
    h.slack.hold('chat.postMessage', { filter: (p) => (p.text ?? '').startsWith('echo: ') && (p.text ?? '').includes('question answered') });
    await ask('answered', 'question answered');
    await h.slack.waitForHeld('chat.postMessage', 20_000);
    // 4. "second chunk": chunk 0 posted, chunk 1 under way (held).
    h.slack.hold('chat.postMessage', { filter: (p) => (p.text ?? '').includes('end of') });
    await ask('chunked', 'question long');
    await h.slack.waitForHeld('chat.postMessage', 20_000);
    // 5. "given up": the agent refused it, the notice's post held.
    if (!skip.has('gaveUp')) {
      h.slack.hold('chat.postMessage', { filter: (p) => /\(ref [A-Z2-9]{6}\)/.test(p.text ?? '') });
      h.agent.failNext(1, { status: 422, body: { error: 'instance refused the message' } }, { endpoint: 'chat' });
      await ask('gaveUp', 'question refused');
      await h.slack.waitForHeld('chat.postMessage', 20_000);
    }
    // 6. "queued": its job waits for a free slot (all taken).
    await ask('queued', 'question queued');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(chats().map((c) => c.message)).not.toContain('question queued');
    expect(chats()).toHaveLength(slots);

    const redis = new Redis('redis://127.0.0.1:6379');
    const keys: unknown[] = [];
    let cursor = '0';
    do {
      const [next, page] = await redis.scan(cursor, 'MATCH', `${h.prefix}:*`, 'COUNT', 500);
      cursor = next;
      for (const key of page) {
        const type = await redis.type(key);
        const pttl = await redis.pttl(key);
        const value =
          type === 'string' ? await redis.get(key)
          : type === 'hash' ? await redis.hgetall(key)
          : type === 'list' ? await redis.lrange(key, 0, -1)
          : type === 'set' ? (await redis.smembers(key)).sort()
          : type === 'zset' ? await redis.zrange(key, '0', '-1', 'WITHSCORES')
          : undefined; // streams: BullMQ's event log, read by nothing that answers
        if (value !== undefined) keys.push({ key: key.slice(h.prefix.length + 1), type, pttl, value });
      }
    } while (cursor !== '0');
    await redis.quit();
    keys.sort((a, b) => ((a as { key: string }).key < (b as { key: string }).key ? -1 : 1));
    const fixture = { capturedAt: Date.now(), team: h.slack.identity.teamId, botUserId: h.slack.identity.botUserId, asked, keys };
    writeFileSync(process.env.CAPTURE_TO!, `${JSON.stringify(fixture, null, 1)}\n`);
  } finally {
    h.slack.releaseHeld();
    await h.close();
  }
}, 90_000);
