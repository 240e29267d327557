import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { REDIS_URL, keysUnder } from '../support/redis-helpers.js';
import { startSlackBridge, W, type SlackHarness } from '../slack/harness.js';
import { until, watchProcessErrors } from './support/guards.js';
import { readQueueFixture, restoreQueueFixture, type QueueFixture } from './support/redis-fixture.js';

/**
 * An upgrade while messages wait: the Redis an earlier release left when it stopped mid-flight
 * (its job locks held, as after a SIGKILL or a rolling deploy's cut-off) is restored under a
 * fresh prefix, and this release's bridge (Slack emulator, real Redis) takes it over. Captured
 * by test/reliability/upgrade-capture.ts from the release named in the file name.
 *
 * Each waiting message is answered once; one whose answer (or give-up notice, or first chunk)
 * the old release recorded is posted without a second billed call; nothing is posted twice.
 */

/** The old release's agent reply, so a resumed chunk is the same text (capture-slack-queue.ts). */
const LONG = (m: string) => `first part of ${m}\n\n${'x'.repeat(3_000)}\n\n${'y'.repeat(3_000)}\n\nend of ${m}`;

/**
 * Landed heads captured: this one (a restart; its fixture also holds a question edited and one
 * deleted while they wait), one release ago, a day earlier, and a day and a half earlier (before
 * give-ups were recorded and before the call-started mark counted calls, not reads).
 * UPGRADE_FIXTURES=<commit>,… runs others: copied with redis-fixture.ts into an older release's
 * tree, this suite runs that release over a newer one's records (a rolling deploy's other half).
 */
const RELEASES = process.env.UPGRADE_FIXTURES?.split(',') ?? ['854a4b8', '2c30d29', '7711481', '26ecde2'];

const guard = watchProcessErrors();
let h: SlackHarness | undefined;
let redis: Redis | undefined;
afterEach(async () => {
  h?.slack.releaseHeld();
  await h?.close();
  await redis?.quit();
  h = undefined;
  redis = undefined;
});

/**
 * Asks the fixture's questions again in a fresh emulator (so Slack knows the threads), restores
 * the old release's keys with their `ts` renamed, then starts this release's bridge on them.
 */
async function upgradeFrom(fixture: QueueFixture) {
  const ts = new Map<string, string>();
  redis = new Redis(REDIS_URL);
  const started = await startSlackBridge({
    mode: 'http',
    emulator: { teamId: fixture.team, botUserId: fixture.botUserId },
    env: { WORKER_LOCK_DURATION_MS: '1000', WORKER_STALLED_INTERVAL_MS: '500' },
    agent: { reply: async (_id, m) => (m.includes('long') ? LONG(m) : `echo: ${m}`) },
    beforeStart: async ({ prefix, slack }) => {
      for (const a of fixture.asked) {
        const threadTs = a.threadOf ? ts.get(fixture.asked.find((b) => b.label === a.threadOf)!.ts) : undefined;
        ts.set(a.ts, slack.userMessage({ channel: a.channel, user: W.user, text: a.text, ...(threadTs ? { threadTs } : {}) }).ts);
      }
      await restoreQueueFixture(redis!, fixture, prefix, ts);
    },
  });
  h = started;
  const tsOf = (label: string) => ts.get(fixture.asked.find((a) => a.label === label)!.ts)!;
  // Every message finished: no mailbox left, and no job waiting or running.
  await until(async () => {
    const left = (await keysUnder(redis!, started.prefix)).filter((k) => /:mbox$/.test(k));
    const jobs = await redis!.llen(`${started.prefix}:chat:active`) + (await redis!.llen(`${started.prefix}:chat:wait`)) + (await redis!.zcard(`${started.prefix}:chat:prioritized`));
    return left.length === 0 && jobs === 0;
  }, 'every message of the old release finished', 60_000);
  const bot = (label: string) => started.slack.thread(W.general, tsOf(label)).filter((m) => m.user === started.slack.identity.botUserId).map((m) => m.text ?? '');
  const calls = (text: string) => started.agent.chatCalls().filter((c) => c.message.includes(text));
  return { bot, calls, tsOf };
}

describe.each(RELEASES)('upgrade from %s with messages waiting (Slack)', (release) => {
  it('answers each message once, posts what was answered before without calling again, and crashes on nothing', async () => {
    const fixture = readQueueFixture(new URL(`../fixtures/upgrade/slack-queue-${release}.json`, import.meta.url));
    const { bot, calls } = await upgradeFrom(fixture);

    // Its call was in flight when the old release stopped: asked again once (at-least-once), answered once.
    expect(calls('question in flight')).toHaveLength(1);
    // Waiting behind it in the thread, and queued for a free slot: asked once each.
    expect(calls('question waiting behind')).toHaveLength(1);
    expect(calls('question queued')).toHaveLength(1);
    // Edited by its sender while it waited: asked as edited. Deleted while it waited: not asked.
    const edits = fixture.asked.some((a) => a.label === 'edited');
    if (edits) {
      expect(calls('question before its edit')).toHaveLength(0);
      expect(calls('question after its edit')).toHaveLength(1);
      expect(calls('question deleted')).toHaveLength(0);
    }
    expect(bot('inFlight')).toEqual(['echo: question in flight', 'echo: question waiting behind', ...(edits ? ['echo: question after its edit'] : [])]);
    expect(bot('queued')).toEqual(['echo: question queued']);

    // Answered before the upgrade, not posted: posted now, with no second call.
    expect(calls('question answered')).toHaveLength(0);
    expect(bot('answered')).toEqual(['echo: question answered']);
    // Its first chunk posted before the upgrade: only the second now, no call.
    expect(calls('question long')).toHaveLength(0);
    expect(bot('chunked')).toHaveLength(1);
    expect(bot('chunked')[0]).toMatch(/end of question long$/);
    // Given up on before the upgrade: its notice, with the old reference, once; no call.
    const gaveUp = fixture.asked.find((a) => a.label === 'gaveUp');
    if (gaveUp) {
      expect(calls('question refused')).toHaveLength(0);
      const mark = fixture.keys.flatMap((k) => (k.type === 'hash' ? Object.entries(k.value as Record<string, string>) : [])).find(([f]) => f.endsWith(`${gaveUp.ts}:gaveUp`));
      const { ref } = JSON.parse(mark![1]) as { ref: string };
      expect(bot('gaveUp')).toEqual([expect.stringContaining(`(ref ${ref})`)]);
    }

    expect(h!.agent.chatCalls()).toHaveLength(edits ? 4 : 3);
    expect(h!.logs.lines.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    expect(guard.errors).toEqual([]);
  }, 90_000);
});
