import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCachedGoneChannels, type CachedGoneChannels } from '../../adapters/slack/gone-cache.js';
import { createGoneChannels } from '../../adapters/slack/gone-channels.js';
import type { Config } from '../../src/config/load.js';
import { bullPrefix } from '../../src/redis.js';
import { invalidations } from '../support/invalidations.js';
import { cleanup, REDIS_URL, testRedis } from '../support/redis-helpers.js';
import { hasConnectionNamed, watchRedisCommands, type CommandWatch } from '../support/redis-monitor.js';
import { botMention, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';
import { NamedHolds } from '../support/held-calls.js';

const { redis, prefix } = testRedis();
const opened: Array<{ cache: CachedGoneChannels; conn: Redis }> = [];
afterAll(async () => {
  for (const o of opened) {
    await o.cache.close();
    await o.conn.quit();
  }
  (await watcher)?.stop();
  await cleanup(redis, prefix);
});

/** One watcher for the file, started while Redis is quiet (see watchRedisCommands). */
let watcher: Promise<CommandWatch> | undefined;
const watchCommands = () => (watcher ??= watchRedisCommands(redis));

const configOf = (p: string) => ({ redis: { clusterNodes: [] }, queue: { prefix: p } }) as unknown as Config;
const keyOf = (p: string, channel: string) => `${p}:slack:channel-gone:${channel}`;

/** One worker's cache on its own connection; `invalidated` resolves when news about `channel` arrived. */
async function worker(p: string) {
  const conn = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const news = invalidations();
  const cache = createCachedGoneChannels(conn, configOf(p), { onInvalidate: news.onInvalidate });
  opened.push({ cache, conn });
  await cache.ready();
  return { cache, invalidated: news.invalidated };
}

beforeAll(async () => void (await watchCommands()));

describe('Slack gone-channel cache', () => {
  it('once warm, asking again reads nothing from Redis; a mark made by another process is seen once announced, and so is its clear', async () => {
    const p = `${prefix}:warm`;
    const watch = await watchCommands();
    const w = await worker(p);
    expect(await w.cache.get('C1')).toBeUndefined();
    await watch.settled();
    const warm = watch.getsOf(keyOf(p, 'C1'));
    expect(warm).toBe(1);
    for (let i = 0; i < 5; i++) expect(await w.cache.get('C1')).toBeUndefined();
    await watch.settled();
    expect(watch.getsOf(keyOf(p, 'C1'))).toBe(warm);

    // The ingress, on a connection of its own, hears the channel was archived.
    const ingress = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
    try {
      const marks = createGoneChannels(ingress, configOf(p));
      const heard = w.invalidated('C1');
      expect(await marks.mark('C1', 'is_archived')).toBe(false);
      await heard;
      expect(await w.cache.get('C1')).toBe('is_archived');
      expect(await w.cache.get('C1')).toBe('is_archived'); // now cached as gone
      await watch.settled();
      expect(watch.getsOf(keyOf(p, 'C1'))).toBe(warm + 1);

      const back = w.invalidated('C1');
      await marks.clear('C1');
      await back;
      expect(await w.cache.get('C1')).toBeUndefined();
    } finally {
      await ingress.quit();
    }
  });

  it("a worker's own clear is not answered from its cache", async () => {
    const p = `${prefix}:own`;
    const w = await worker(p);
    await createGoneChannels(redis, configOf(p)).mark('C2', 'not_in_channel');
    expect(await w.cache.get('C2')).toBe('not_in_channel');
    await w.cache.clear('C2');
    expect(await w.cache.get('C2')).toBeUndefined();
    expect(await redis.exists(keyOf(p, 'C2'))).toBe(0);
  });

  it('after its subscription drops, a worker forgets what it cached (announcements may have been missed)', async () => {
    const p = `${prefix}:reconnect`;
    const w = await worker(p);
    expect(await w.cache.get('C3')).toBeUndefined();
    const list = (await redis.client('LIST')) as string;
    const id = new RegExp(`id=(\\d+) .*name=${p}:slack:channels-gone:changed:cache`).exec(list)?.[1];
    expect(id).toBeDefined();
    const resubscribed = w.invalidated(undefined);
    await redis.client('KILL', 'ID', id!);
    // Written without its announcement, as one made while the subscription was down would be heard.
    await redis.set(keyOf(p, 'C3'), 'channel_not_found');
    await resubscribed;
    expect(await w.cache.get('C3')).toBe('channel_not_found');
  });
});

describe('Slack worker: the gone marks cost no Redis read per message', () => {
  let h: SlackHarness;
  let closed = false;
  const holds = new NamedHolds();
  const WARMED = 'C0WARMED1';
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      agent: {
        // "hold <name>" waits for the test to release it.
        reply: holds.reply,
      },
      // One message at a time: the one held in #general keeps the next waiting.
      env: { WORKER_CONCURRENCY: '1', BINDINGS: [W.general, WARMED].map((c) => `slack:${c}=demo-helper`).join(',') },
    });
  });
  afterAll(async () => {
    if (!closed) await h?.close();
  });
  /** One message answered: its working reaction shown and its reply posted. */
  const answered = async (channel: string, text: string) => {
    const m = await say(h, { channel, text: `${botMention(h)} ${text}` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && c.response.ok === true);
    await h.slack.waitForCall('reactions.add', (c) => c.params.timestamp === m.ts);
  };
  const calledWith = (text: string) => h.agent.calls.filter((c) => c.endpoint === 'chat' && (c.json as { message?: string }).message?.includes(text));

  it('a channel the worker has just answered in, archived while a message of it waits: the agent is not asked; unarchived it answers again', async () => {
    await answered(WARMED, 'warm one');
    await answered(WARMED, 'warm two'); // cached as not gone by now
    const busy = await say(h, { channel: W.general, text: `${botMention(h)} hold busy` });
    await until(() => holds.has('busy'), 'agent busy');
    const queued = await say(h, { channel: WARMED, text: `${botMention(h)} after the archive` });
    for (const e of h.slack.archiveChannel(WARMED, W.admin)) await h.to.event(e);
    holds.release('busy');
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === busy.ts && c.response.ok === true);
    await until(() => h.logs.matching(/gave up on a message/).some((l) => String(l.messageId).endsWith(queued.ts)), 'given up');
    expect(calledWith('after the archive')).toEqual([]);

    for (const e of h.slack.unarchiveChannel(WARMED, W.admin)) await h.to.event(e);
    // The first message after it gets its working reaction too: the unarchive's news, not a
    // check (which runs beside the reaction), lifts the refusal the worker remembered.
    await answered(WARMED, 'unarchived');
    expect(calledWith('unarchived')).toHaveLength(1);
  }, 30_000);

  it('messages in a channel that is not gone read its mark from Redis only until the cache is warm, and the subscription closes with the bridge', async () => {
    const watch = await watchCommands();
    const key = `${bullPrefix(h.bridge.config)}:slack:channel-gone:${W.general}`;
    // The first messages open the subscription and fill the cache.
    await answered(W.general, 'warm one');
    await answered(W.general, 'warm two');
    expect(await watch.getsDuring(key, async () => {
      for (let i = 0; i < 3; i++) await answered(W.general, `hot ${i}`);
    })).toBe(0);

    const name = `${bullPrefix(h.bridge.config)}:slack:channels-gone:changed:cache`;
    expect(await hasConnectionNamed(redis, name)).toBe(true);
    closed = true;
    await h.close();
    await until(async () => !(await hasConnectionNamed(redis, name)), 'subscription closed');
  });
});
