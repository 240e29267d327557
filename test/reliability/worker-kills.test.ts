import { afterAll, describe, expect, it } from 'vitest';
import { workerEnvFor } from '../support/child-worker.js';
import { Redis } from 'ioredis';
import { startPipeline, webMessage, type Pipeline } from '../support/pipeline.js';
import { sleep, until, watchProcessErrors } from './support/guards.js';
import { SHARED_REDIS, messageRecords } from './support/keys.js';
import { figures } from './support/ledger.js';
import { interleavedTraffic } from './support/traffic.js';
import { startWorker, type WorkerProcess } from './support/workers.js';

/**
 * Worker processes SIGKILLed again and again while 300 messages in 30 conversations flow:
 * every message answered exactly once, in order per conversation, and the agent asked again
 * only for messages whose call was in flight when a worker died; a message whose worker died
 * during two of its calls is not asked a third time (at-least-once's bound): the user reads that
 * its answer was lost, in its place.
 */
const CONVERSATIONS = 30;
const PER_CONVERSATION = 10;
const KILLS = 4;

let p: Pipeline | undefined;
let redis: Redis | undefined;
const workers: WorkerProcess[] = [];
const guard = watchProcessErrors();

afterAll(async () => {
  guard.stop();
  await Promise.all(workers.map((w) => w.kill9()));
  redis?.disconnect();
  await p?.close();
});

describe('worker processes killed with SIGKILL during traffic', () => {
  it(`${CONVERSATIONS * PER_CONVERSATION} messages, ${KILLS} kills: each answered once, in order, re-asked only when in flight, at most twice`, async () => {
    p = await startPipeline({ ROLE: 'ingress', LOG_LEVEL: 'warn' });
    const pl = p;
    redis = new Redis(SHARED_REDIS);
    // Calls take a while, so every kill finds some in flight.
    // Longer than the gap between waves, so every kill finds agent calls in flight (with 150 ms a
    // quiet machine could finish each wave before a kill came).
    pl.agent.setDelay(800, { endpoint: 'chat' });
    const env = workerEnvFor(pl, {
      // Short enough to recover in seconds, long enough that a busy 2-core box does not miss a
      // renewal: a job whose lock lapses while its worker lives is run twice (see the SIGSTOP test).
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      WORKER_CONCURRENCY: '20',
      RETRY_BASE_DELAY_MS: '20',
    });
    const live: Array<WorkerProcess | undefined> = [];
    for (let i = 0; i < 2; i++) {
      const w = await startWorker(env);
      workers.push(w);
      live.push(w);
    }

    const { ledger, byText, messages, inFlight: inFlightOf, markedStarted } = interleavedTraffic({ conversations: CONVERSATIONS, perConversation: PER_CONVERSATION, channel: 'kill', text: 'k' });
    const inFlight = () => inFlightOf(pl, redis!);

    /**
     * Messages whose reply the platform accepted but whose `posted` record is not written: a
     * kill right there makes the retry post again. No platform-neutral bridge can avoid that
     * (the sink, like Slack, has no idempotency key), so such duplicates are counted apart.
     */
    const postedNotRecorded = async (): Promise<string[]> => {
      const posted = [...new Set(pl.sink.posts.filter((x) => x.kind === 'chunk').map((x) => x.messageId))];
      const refs = posted.flatMap((id) => [...byText.values()].filter((r) => r.messageId === id));
      const records = await messageRecords(redis!, pl.prefix, refs);
      return refs.filter((_, i) => records[i]?.reply !== undefined && Number(records[i]?.posted ?? 0) === 0).map((r) => r.messageId);
    };

    const kills: Array<{ at: number; victim: number; inFlight: string[]; marked: string[]; postWindow: string[] }> = [];
    const replacements: Array<Promise<void>> = [];
    const started = Date.now();
    // Waves of one message per conversation, so many calls are in flight at any moment.
    const traffic = (async () => {
      for (let i = 0; i < PER_CONVERSATION; i++) {
        const wave = messages.slice(i * CONVERSATIONS, (i + 1) * CONVERSATIONS);
        for (const m of wave) await expect(pl.bridge.ingress.handle(m)).resolves.toMatchObject({ status: 'queued' });
        await sleep(700);
      }
    })();
    const killer = (async () => {
      for (let k = 0; k < KILLS; k++) {
        await sleep(k === 0 ? 1_200 : 1_600);
        const victim = await until(() => {
          const i = [k % 2, 1 - (k % 2)].find((j) => live[j] !== undefined);
          return i === undefined ? undefined : i + 1;
        }, 'a live worker to kill', 20_000).then((i) => i - 1);
        const w = live[victim]!;
        live[victim] = undefined;
        await w.kill9();
        kills.push({ at: Date.now() - started, victim: w.pid, inFlight: await inFlight(), marked: await markedStarted(pl, redis!), postWindow: await postedNotRecorded() });
        replacements.push(
          startWorker(env).then((r) => {
            workers.push(r);
            live[victim] = r;
          }),
        );
      }
    })();
    await Promise.all([traffic, killer]);
    await Promise.all(replacements);

    const total = messages.length;
    await pl.sink.waitFor((posts) => new Set(posts.map((x) => x.messageId)).size >= total, 60_000).catch(() => undefined);
    // Quiet period past the lock and stalled-check intervals: a late duplicate would show here.
    await sleep(3_500);
    await until(async () => (await pl.bridge.queue.counts()).active === 0, 'queue idle', 10_000).catch(() => undefined);

    // An "answer lost" notice takes its message's place in the conversation.
    const result = ledger.evaluate(pl.sink.posts.filter((x) => x.kind === 'chunk' || x.kind === 'notice').map((x) => x.messageId));
    const notices = pl.sink.posts.filter((x) => x.kind === 'notice');
    const calls = pl.agent.chatCalls();
    const callsPer = new Map<string, number>();
    for (const c of calls) {
      const id = byText.get(c.message)?.messageId;
      if (id) callsPer.set(id, (callsPer.get(id) ?? 0) + 1);
    }
    const inFlightTotal = kills.reduce((n, k) => n + k.inFlight.length, 0);
    const postWindows = new Set(kills.flatMap((k) => k.postWindow));
    const posted = new Map<string, number>();
    for (const x of pl.sink.posts.filter((y) => y.kind === 'chunk')) posted.set(x.messageId, (posted.get(x.messageId) ?? 0) + 1);
    const duplicatedIds = [...posted].filter(([, n]) => n > 1).map(([id]) => id);
    const unexplainedDuplicates = duplicatedIds.filter((id) => !postWindows.has(id));
    const unexplained: string[] = [];
    for (const [id, n] of callsPer) {
      const allowed = 1 + kills.filter((k) => k.inFlight.includes(id)).length;
      if (n > allowed) unexplained.push(`${id}: ${n} calls, allowed ${allowed}`);
    }
    const callsHistogram: Record<number, number> = {};
    for (const n of callsPer.values()) callsHistogram[n] = (callsHistogram[n] ?? 0) + 1;
    // A notice only for a message whose call two kills cut: each time called or marked started
    // (a kill between the mark and the call counts as a call would: the bridge cannot tell them
    // apart, ARCHITECTURE), and never after more than two calls.
    const cutByKills = (id: string) => kills.filter((k) => k.inFlight.includes(id) || k.marked.includes(id)).length;
    const unexplainedNotices = notices
      .filter((x) => !/^The answer was lost when the bridge restarted; please ask again\. \(ref [A-Z2-9]{6}\)$/.test(x.text) || (callsPer.get(x.messageId) ?? 0) > 2 || cutByKills(x.messageId) < 2)
      .map((x) => `${x.messageId}: ${callsPer.get(x.messageId) ?? 0} calls, cut by ${cutByKills(x.messageId)} kill(s), ${x.text.slice(0, 60)}`);
    figures('sigkill', {
      messages: total,
      conversations: CONVERSATIONS,
      kills: kills.length,
      killTimesMs: kills.map((k) => k.at),
      inFlightAtKills: kills.map((k) => k.inFlight.length),
      agentCalls: calls.length,
      extraCalls: calls.length - total,
      lost: result.lost,
      duplicated: result.duplicated,
      killsBetweenPostAndRecord: postWindows.size,
      unexplainedDuplicates: unexplainedDuplicates.length,
      outOfOrder: result.outOfOrder,
      answerLost: notices.length,
      callsPerMessage: callsHistogram,
      unexplainedRecalls: unexplained.length,
      ms: Date.now() - started,
      examples: result.examples,
    });

    expect(kills).toHaveLength(KILLS);
    expect(inFlightTotal).toBeGreaterThan(0);
    expect(unexplainedNotices).toEqual([]);
    // At-least-once's bound: no message was called more than twice, however often it was in flight at a kill.
    expect(Math.max(...callsPer.values())).toBeLessThanOrEqual(2);
    expect(result).toMatchObject({ lost: 0, outOfOrder: 0, unknown: 0 });
    // A second reply only where a kill fell between the platform accepting it and its record.
    expect(unexplainedDuplicates).toEqual([]);
    expect(result.duplicated).toBeLessThanOrEqual(postWindows.size);
    expect(unexplained).toEqual([]);
    expect(calls.length - total).toBeLessThanOrEqual(inFlightTotal);
    // Each conversation reached the agent in order (first call of each message; a message ended
    // with the notice before any call went out is not asked).
    const noticed = new Set(notices.map((x) => x.messageId));
    for (let c = 0; c < CONVERSATIONS; c++) {
      const asked = [...new Set(calls.map((x) => x.message).filter((t) => t.startsWith(`k${c}-`)))];
      const expected = [...Array(PER_CONVERSATION).keys()].map((i) => `k${c}-${i}`).filter((t) => !noticed.has(byText.get(t)!.messageId) || callsPer.has(byText.get(t)!.messageId));
      expect(asked).toEqual(expected);
    }
    expect(guard.errors).toEqual([]);
  }, 120_000);

  it('a worker paused (SIGSTOP) past its lock while its agent call is in flight: the message is still answered once', async () => {
    await p?.close();
    redis?.disconnect();
    p = await startPipeline({ ROLE: 'ingress', LOG_LEVEL: 'warn' });
    const pl = p;
    const env = workerEnvFor(pl);
    const a = await startWorker(env);
    workers.push(a);
    // A's call hangs; A is then frozen (a long GC pause, a stopped VM, a partition) past its lock.
    pl.agent.hangNext(1, { endpoint: 'chat' });
    const m = webMessage('frozen in flight', { channelId: 'frozen', isDirect: true });
    await pl.bridge.ingress.handle(m);
    await pl.agent.waitForCalls(1, (c) => c.endpoint === 'chat');
    process.kill(a.pid, 'SIGSTOP');
    try {
      const b = await startWorker(env);
      workers.push(b);
      // B finds the job stalled, takes it over and answers.
      await pl.sink.waitFor((posts) => posts.some((x) => x.messageId === m.messageId), 20_000);
    } finally {
      process.kill(a.pid, 'SIGCONT');
    }
    // A wakes up and its call returns: it must notice it no longer owns the job.
    pl.agent.releaseHanging();
    await sleep(2_500);
    const posts = pl.sink.posts.filter((x) => x.messageId === m.messageId);
    figures('sigstop', { agentCalls: pl.agent.chatCalls().length, posts: posts.length });
    expect(pl.agent.chatCalls()).toHaveLength(2);
    expect(posts, 'replies to the message').toHaveLength(1);
  }, 60_000);
});
