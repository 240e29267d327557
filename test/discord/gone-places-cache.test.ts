import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GonePlaces } from '../../adapters/discord/gone-places.js';
import { invalidations } from '../support/invalidations.js';
import { cleanup, REDIS_URL, testRedis } from '../support/redis-helpers.js';
import { hasConnectionNamed, watchRedisCommands, type CommandWatch } from '../support/redis-monitor.js';
import type { EmuChannel } from '../emulators/discord/index.js';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';
import { NamedHolds } from '../support/held-calls.js';

/**
 * The gone places (deleted, left, locked) are asked before every billed agent call: a worker
 * answers from memory once it has seen a place, and every write is announced so it never answers
 * from a stale entry. (vanishing-places.test.ts proves a place gone while a message waits is not
 * asked about, on a worker that answered there a moment before.)
 */
const { redis, prefix } = testRedis();
const opened: Array<{ places: GonePlaces; conn: Redis }> = [];
/** One watcher for the file, started while Redis is quiet (see watchRedisCommands). */
let watcher: Promise<CommandWatch> | undefined;
const watchCommands = () => (watcher ??= watchRedisCommands(redis));
beforeAll(async () => void (await watchCommands()));
afterAll(async () => {
  for (const o of opened) {
    await o.places.close();
    await o.conn.quit();
  }
  (await watcher)?.stop();
  await cleanup(redis, prefix);
});

/** A process's GonePlaces on its own connection; `invalidated` resolves when news about a place arrived. */
async function processOf(p: string) {
  const conn = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const news = invalidations();
  const places = new GonePlaces(conn, p, { onInvalidate: news.onInvalidate });
  opened.push({ places, conn });
  return { places, invalidated: news.invalidated };
}

describe('Discord gone places, cached', () => {
  it('once warm, asking again reads nothing from Redis; every kind of write made by another process is seen once announced', async () => {
    const p = `${prefix}:warm`;
    const watch = await watchCommands();
    const key = `${p}:discord:gone:1001`;
    const worker = await processOf(p);
    const ingress = await processOf(p);
    expect(await worker.places.why('1001')).toBeUndefined();
    await worker.places.ready();
    expect(await worker.places.why('1001')).toBeUndefined();
    await watch.settled();
    const warm = watch.getsOf(key);
    expect(await watch.getsDuring(key, async () => {
      for (let i = 0; i < 5; i++) expect(await worker.places.why('1001')).toBeUndefined();
    })).toBe(0);

    /** Runs an ingress write and waits for its news at the worker; then the worker's answer. */
    const after = async (write: () => Promise<void>) => {
      const heard = worker.invalidated('1001');
      await write();
      await heard;
      return worker.places.why('1001');
    };
    expect(await after(() => ingress.places.threadClosed('1001', true))).toEqual({ code: '50083', why: 'is a locked, archived thread' });
    expect(await after(() => ingress.places.threadClosed('1001', false))).toBeUndefined();
    expect(await after(() => ingress.places.leftGuild('9001', ['1001', '1002']))).toEqual({ code: '10003', why: 'is in a server (9001) the bot was removed from' });
    expect(await after(() => ingress.places.inGuild('9001', ['1001', '1002']))).toBeUndefined();
    expect(await after(() => ingress.places.mark(['1001'], 'was deleted'))).toEqual({ code: '10003', why: 'was deleted' });
    // One read per change, and none more for asking again.
    expect(await worker.places.why('1001')).toEqual({ code: '10003', why: 'was deleted' });
    await watch.settled();
    expect(watch.getsOf(key)).toBe(warm + 5);
    // The ingress never asked: it opened no subscription of its own.
    const subscriptions = ((await redis.client('LIST')) as string).split('\n').filter((l) => l.includes(` name=${p}:discord:gone:changed:cache `));
    expect(subscriptions).toHaveLength(1);
  });

  it("a worker's own write is not answered from its cache", async () => {
    const p = `${prefix}:own`;
    const worker = await processOf(p);
    expect(await worker.places.why('2001')).toBeUndefined();
    await worker.places.ready();
    expect(await worker.places.why('2001')).toBeUndefined();
    await worker.places.mark(['2001'], 'was deleted');
    expect(await worker.places.why('2001')).toEqual({ code: '10003', why: 'was deleted' });
  });
});

describe('Discord worker: the gone places cost no Redis read per message', () => {
  let h: DiscordHarness;
  let closed = false;
  const holds = new NamedHolds();
  beforeAll(async () => {
    h = await startDiscordBridge({
      extraChannels: 2,
      agent: {
        // "hold <name>" waits for the test to release it.
        reply: holds.reply,
      },
      // One message at a time: the one held in #general keeps the next waiting.
      env: { WORKER_CONCURRENCY: '1' },
    });
  });
  afterAll(async () => {
    holds.releaseAll();
    if (!closed) await h?.close();
  });
  const say = (channel: EmuChannel, text: string) => h.discord.sendMessage({ author: h.discord.world.users.alice, channel, content: `${mention(h.discord)} ${text}` });
  const answered = async (text: string, channel: EmuChannel = h.discord.world.channels.general) => {
    const m = say(channel, text);
    await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], `"${text}" answered`);
  };
  const called = (text: string) => h.agent.chatCalls().filter((c) => c.message.includes(text)).length;
  /** Holds the worker on a call in #general, runs `change` while `text` waits in `channel`, then lets it go. */
  async function waitingThrough(channel: EmuChannel, text: string, change: () => Promise<void>) {
    const busy = say(h.discord.world.channels.general, 'hold busy');
    await until(() => holds.has('busy'), 'agent busy');
    const queued = say(channel, text);
    await until(() => h.logs.matching(/discord message handled/).some((l) => l.messageId === queued.id && l.status === 'queued'), 'queued');
    await change();
    holds.release('busy');
    await h.discord.waitFor(() => h.discord.repliesTo(busy.id)[0], 'busy one answered');
    await until(() => h.logs.matching(/gave up on a message/).some((l) => String(l.conversationId).includes(channel.id)), 'given up');
  }

  it('a place the worker has just answered in, gone while a message of it waits: the agent is not asked, with no refused post to tell it', async () => {
    // Deleted: the worker cached the channel as not gone on the messages before.
    const channel = h.extra[0]!;
    await answered('warm one', channel);
    await answered('warm two', channel);
    await waitingThrough(channel, 'after the delete', async () => {
      h.discord.deleteChannel(channel);
      await until(() => h.logs.text.includes('a channel was deleted'), 'deletion seen by the bridge');
    });
    expect(called('after the delete')).toBe(0);

    // Locked: no answer was refused there, so only the announcement can tell the worker.
    const thread = h.discord.createThread(h.extra[1]!, 'locked while waiting');
    await answered('warm in the thread', thread);
    await waitingThrough(thread, 'after the lock', async () => {
      h.discord.setThreadArchived(thread, { archived: true, locked: true });
      await until(async () => (await h.bridge.redis.exists(`${h.bridge.config.queue.prefix}:discord:gone:${thread.id}`)) === 1, 'lock seen by the bridge');
    });
    expect(called('after the lock')).toBe(0);
    expect(h.discord.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${thread.id}/messages` && c.status !== 200)).toEqual([]);
    // Unlocked: answered again (its gone entry was dropped on the news).
    h.discord.setThreadArchived(thread, { archived: false, locked: false });
    await until(async () => (await h.bridge.redis.exists(`${h.bridge.config.queue.prefix}:discord:gone:${thread.id}`)) === 0, 'unlock seen by the bridge');
    await answered('after the unlock', thread);
  });

  it('messages in a place that is not gone read its mark from Redis only until the cache is warm, and the subscription closes with the bridge', async () => {
    const watch = await watchCommands();
    const key = `${h.bridge.config.queue.prefix}:discord:gone:${h.discord.world.channels.general.id}`;
    // The first messages open the subscription and fill the cache.
    await answered('warm one');
    await answered('warm two');
    expect(watch.getsOf(key)).toBeGreaterThan(0);
    // Before: one GET per message (in the reply port's `ready`, before each agent call).
    expect(await watch.getsDuring(key, async () => {
      for (let i = 0; i < 3; i++) await answered(`hot ${i}`);
    })).toBe(0);

    const name = `${h.bridge.config.queue.prefix}:discord:gone:changed:cache`;
    expect(await hasConnectionNamed(redis, name)).toBe(true);
    closed = true;
    await h.close();
    await until(async () => !(await hasConnectionNamed(redis, name)), 'subscription closed');
  });
});
