import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { IngressResult } from '../../src/ingress/types.js';
import { notices } from '../../src/ingress/notices.js';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { botMention, say, startSlackBridge, W, type SlackHarness } from '../slack/harness.js';
import { sleep, until, watchProcessErrors } from './support/guards.js';
import { figures, Ledger } from './support/ledger.js';
import { OwnRedis } from './support/redis-server.js';

/**
 * Redis stopped and restarted under traffic, on a private redis-server (AOF on, as in
 * production): ingress never crashes, a message that arrives during the outage is retried for
 * a bounded time (ingress.handle keeps trying ~10 s) and the user is told when it could not be
 * accepted, processing resumes by itself, and nothing that was accepted is lost.
 */
let redis: OwnRedis | undefined;
let p: Pipeline | undefined;
let h: SlackHarness | undefined;
const guard = watchProcessErrors();

afterEach(async () => {
  await p?.close();
  await h?.close();
  p = undefined;
  h = undefined;
  await redis?.close();
  redis = undefined;
});

const accepted = (r: IngressResult) => r.status === 'queued' || r.status === 'duplicate';

describe('Redis restarted during traffic', () => {
  it('an outage shorter than the retry bound: messages sent during it are accepted late, none is lost', async () => {
    redis = await new OwnRedis({ appendonly: true }).start();
    // Locks outlast the outage here; an outage longer than the lock: the next test.
    p = await startPipeline({ REDIS_URL: redis.url, LOG_LEVEL: 'warn', WORKER_LOCK_DURATION_MS: '10000', WORKER_STALLED_INTERVAL_MS: '5000' });
    const pl = p;
    pl.agent.setDelay(100, { endpoint: 'chat' });
    const ledger = new Ledger();
    const conversations = 10;
    let n = 0;
    const next = () => {
      const c = n % conversations;
      const m = webMessage(`r${c}-${n++}`, { channelId: `redis${c}`, isDirect: true });
      return m;
    };
    const send = async (count: number) => {
      const out: Array<{ id: string; conversation: string; result: IngressResult; ms: number }> = [];
      await Promise.all(
        Array.from({ length: count }, async () => {
          const m = next();
          const started = Date.now();
          // Sent in order per conversation: a conversation's next message waits for the previous one.
          const result = await pl.bridge.ingress.handle(m);
          out.push({ id: m.messageId, conversation: m.conversation.channelId, result, ms: Date.now() - started });
        }),
      );
      return out;
    };

    // Before: accepted at once.
    const before = [];
    for (let i = 0; i < 40; i++) before.push(...(await send(1)));
    expect(before.every((r) => accepted(r.result))).toBe(true);

    // Outage of ~3 s, well inside the ~10 s bound.
    await redis.stop('SIGKILL');
    const outageStarted = Date.now();
    const during = send(20);
    await sleep(3_000);
    await redis.start();
    const outageMs = Date.now() - outageStarted;
    const duringResults = await during;
    const after = [];
    for (let i = 0; i < 40; i++) after.push(...(await send(1)));

    const all = [...before, ...duringResults, ...after];
    for (const r of all.filter((x) => accepted(x.result))) ledger.send(r.conversation, r.id);
    const refused = all.filter((x) => !accepted(x.result));
    // Jobs interrupted by the outage come back through the stalled check or their backoff.
    await pl.sink.waitFor((posts) => ledger.ids().every((id) => posts.some((x) => x.messageId === id && x.kind === 'chunk')), 60_000).catch(() => undefined);
    const recoveredAfterMs = Date.now() - outageStarted - outageMs;
    await sleep(1_500);
    const result = ledger.evaluate(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId));
    const noticed = refused.filter((r) => pl.sink.posts.some((x) => x.messageId === r.id && x.kind === 'notice' && x.text === notices.unavailable));
    figures('redis-restart-short', {
      outageMs,
      sent: all.length,
      sentDuringOutage: duringResults.length,
      acceptedDuringOutage: duringResults.filter((r) => accepted(r.result)).length,
      refusedDuringOutage: refused.length,
      refusedAfterMs: refused.map((r) => r.ms),
      toldUser: noticed.length,
      allAnsweredMsAfterRestart: recoveredAfterMs,
      agentCalls: pl.agent.chatCalls().length,
      ...result,
    });

    // Nothing accepted is lost or answered twice, and order holds, across the restart.
    expect(result).toMatchObject({ lost: 0, duplicated: 0, outOfOrder: 0 });
    // Whoever was refused was told so, once.
    expect(noticed).toHaveLength(refused.length);
    expect(after.every((r) => accepted(r.result))).toBe(true);
    expect(guard.errors).toEqual([]);
    // No worker died, so no call should be repeated (each is billed): an answer that arrived
    // during the outage must be kept, not fetched again.
    expect.soft(pl.agent.chatCalls().length, 'agent calls for the accepted messages').toBe(ledger.messages);
    // A 3 s outage is inside the ingress retry bound: every message sent during it is accepted.
    expect(refused.map((r) => `${r.result.status}:${'reason' in r.result ? r.result.reason : ''} after ${r.ms} ms`)).toEqual([]);
  }, 120_000);

  /**
   * Five agent calls in flight when Redis (AOF) is SIGKILLed for `outageMs`, longer than the job
   * lock: each answer is posted once and no message is asked again.
   */
  async function outageDuringCalls(o: { lockMs: number; callMs: number; outageMs: number; settleMs: number; label: string }) {
    redis = await new OwnRedis({ appendonly: true }).start();
    p = await startPipeline({ REDIS_URL: redis.url, LOG_LEVEL: 'warn', WORKER_LOCK_DURATION_MS: String(o.lockMs), WORKER_STALLED_INTERVAL_MS: String(o.lockMs) });
    const pl = p;
    pl.agent.setDelay(o.callMs, { endpoint: 'chat' });
    const ms = Array.from({ length: 5 }, (_, i) => webMessage(`${o.label} ${i}`, { channelId: `${o.label.replace(/\W/g, '')}${i}`, isDirect: true }));
    for (const m of ms) expect(accepted(await pl.bridge.ingress.handle(m))).toBe(true);
    await pl.agent.waitForCalls(ms.length, (c) => c.endpoint === 'chat');
    await redis.stop('SIGKILL');
    await sleep(o.outageMs);
    await redis.start();
    await pl.sink.waitFor((posts) => ms.every((m) => posts.some((x) => x.messageId === m.messageId && x.kind === 'chunk')), 30_000);
    // Long enough for the stalled check to have handed out any job it still took for dead.
    await sleep(o.settleMs);
    for (const m of ms) expect(pl.sink.posts.filter((x) => x.messageId === m.messageId).map((x) => x.kind)).toEqual(['chunk']);
    expect(pl.agent.chatCalls().map((c) => c.message).sort()).toEqual(ms.map((m) => m.text).sort());
  }

  it('an outage longer than the job lock during agent calls: each answer that comes back is kept and posted, never asked again', async () => {
    // The lock (2 s) lapses during the 3 s outage; the agent answers after it, once Redis is back.
    await outageDuringCalls({ lockMs: 2_000, callMs: 4_500, outageMs: 3_000, settleMs: 6_000, label: 'long outage' });
  }, 90_000);

  it('an outage longer than the job lock, with calls that outlast the stalled check after it: their locks are taken back, nothing is asked twice', async () => {
    // The lock (1 s) lapses during the 2.5 s outage; the calls answer ~6 s after the restart,
    // long after the stalled check (every 1 s) would have handed their jobs out again.
    await outageDuringCalls({ lockMs: 1_000, callMs: 9_000, outageMs: 2_500, settleMs: 3_000, label: 'longer call' });
  }, 90_000);

  it('through Slack, an outage longer than the bound: the event is acked, the user told in the thread, and the bridge heals by itself', async () => {
    redis = await new OwnRedis({ appendonly: true }).start();
    // A job that was active when Redis died keeps its lock (AOF) until the lock expires, and is
    // then picked up by the stalled check: with the 30 s defaults that takes up to a minute
    // after the restart. Shorter settings keep the test about the outage, not about those timers.
    const timers = { WORKER_LOCK_DURATION_MS: '5000', WORKER_STALLED_INTERVAL_MS: '2500' };
    h = await startSlackBridge({ mode: 'http', env: { REDIS_URL: redis.url, LOG_LEVEL: 'warn', ...timers }, agent: { reply: (_id, m) => `echo: ${m}` } });
    const hs = h;
    const ask = async (text: string) => say(hs, { channel: W.general, text: `${botMention(hs)} ${text}` });
    const replied = (ts: string) => hs.slack.posted((c) => c.params.thread_ts === ts && (c.params.text ?? '').startsWith('echo:'));

    const early: Array<Awaited<ReturnType<typeof ask>>> = [];
    for (let i = 0; i < 5; i++) early.push(await ask(`before ${i}`));
    // Slack is acked before the message is stored, so on a busy machine the last of these may
    // still be on its way into Redis; they are the "accepted before the outage" ones only once
    // the mailbox holds them (the seen ledger says 'queued'). One still on its way when Redis
    // dies is the `lateAccepted` case below (CI failed here waiting for an answer to a message
    // that had been refused, correctly, with a notice).
    const seen = new Redis(redis.url);
    try {
      await until(
        async () => (await seen.mget(early.map((e) => `${hs.prefix}:chat:seen:slack:${W.general}:${e.ts}`))).every((v) => v === 'queued'),
        'the early messages stored',
        30_000,
      );
    } finally {
      seen.disconnect();
    }
    await redis.stop('SIGKILL');
    // Still unanswered ones among these must survive the outage (AOF).
    const lateAccepted = await ask('accepted just before the outage?');

    const started = Date.now();
    const m = hs.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(hs)} during the outage` });
    const delivery = await hs.to.event(m.mention);
    await hs.to.event(m.message);
    // Redis stays down for 13 s, longer than the ~10 s the ingress keeps trying.
    const restarted = sleep(13_000).then(() => redis!.start());
    const notice = await hs.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && /couldn.t accept/.test(c.params.text ?? ''), 30_000);
    const toldAfterMs = notice.at - started;
    await restarted;
    const after = await ask('after the outage');
    // Generous deadlines: on a machine busy with other work recovery is slower, not different;
    // a conversation that is really stuck still fails them.
    await until(() => replied(after.ts).length > 0, 'answer after the restart', 60_000);
    await until(() => early.every((e) => replied(e.ts).length > 0), `answers to ${early.map((e) => e.ts).join(', ')}`, 60_000);
    await sleep(1_000);

    figures('redis-restart-slack', {
      ackMs: delivery.ms,
      ackStatus: delivery.status,
      toldUserAfterMs: toldAfterMs,
      notices: hs.slack.posted((c) => c.params.thread_ts === m.ts).length,
      answeredAfterRestart: replied(after.ts).length,
      lateAccepted: replied(lateAccepted.ts).length,
    });
    expect(delivery).toMatchObject({ acked: true, status: 200 });
    expect(delivery.ms).toBeLessThan(3_000);
    expect(hs.agent.chatCalls().filter((c) => c.message.includes('during the outage'))).toHaveLength(0);
    // Every message is answered exactly once. A reply whose post reached Slack just as Redis
    // died is found again by its metadata when the job is retried, not posted twice (issue 12).
    for (const e of [...early, after]) expect(replied(e.ts)).toHaveLength(1);
    // Sent as Redis died: answered once, or the user was told; never silently lost.
    const toldLate = hs.slack.posted((c) => c.params.thread_ts === lateAccepted.ts && /couldn.t accept/.test(c.params.text ?? '')).length;
    expect(replied(lateAccepted.ts).length).toBeLessThanOrEqual(1);
    expect(replied(lateAccepted.ts).length + toldLate).toBeGreaterThan(0);
    expect(guard.errors).toEqual([]);
    // Told once (app_mention and message are one message), once Redis, back at 13 s, says the
    // message was not stored (before, the notice went at 10 s, and a push still queued in the
    // client could run afterwards and be answered: test/reliability/redis-stall-notice.test.ts).
    expect.soft(hs.slack.posted((c) => c.params.thread_ts === m.ts), 'notices for one message').toHaveLength(1);
    // 10 s of retries, then up to 20 s more waiting for Redis to answer.
    expect.soft(toldAfterMs, 'ms until the user was told').toBeLessThan(30_000);
  }, 180_000);
});
