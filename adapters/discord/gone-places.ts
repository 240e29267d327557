import type { Redis } from 'ioredis';
import { createAnnouncedMarks, type AnnouncedMarks } from '../../src/announced-marks.js';
import type { Logger } from '../../src/logger.js';

/**
 * How long a channel stays known as gone. Discord never reuses a deleted channel's ID, so this
 * only bounds what Redis keeps: messages queued there are long given up on by then.
 */
const GONE_TTL_SECONDS = 30 * 24 * 3600;
/**
 * How long a locked, archived thread counts as closed: long enough for the messages queued there
 * when it was locked, short enough that a missed unlock (THREAD_UPDATE while no ingress ran)
 * does not turn later messages away for long.
 */
const LOCKED_TTL_SECONDS = 15 * 60;

/** What a post there would meet: Discord's code, and why in plain words. */
export interface Gone {
  code: string;
  why: string;
}

export interface GonePlacesOptions {
  logger?: Pick<Logger, 'warn'> | undefined;
  /** Called after a place's entry or (undefined) every entry was dropped on news from Redis (tests). */
  onInvalidate?: (channelId: string | undefined) => void;
}

/**
 * Channels and threads the bot can no longer post in for good, shared through Redis: the ingress
 * learns it from the gateway (CHANNEL_DELETE, THREAD_DELETE, GUILD_DELETE when the bot was
 * removed) and a worker from a 404 Unknown Channel; every worker asks it right before a billed
 * agent call (the reply port's `ready`), so a message queued for such a place is not sent.
 *
 * Asked for every message, so answered from memory (src/announced-marks.ts): a place not gone
 * costs no Redis round trip once seen. Every write announces the places it changes in the same
 * MULTI, and each worker drops them on the news, which Redis sends before it answers the ingress:
 * a place deleted, left or locked while a message waits is seen as such when the message is
 * taken. The subscription opens with the first lookup (a worker's), and ends with `close`.
 */
export class GonePlaces {
  private readonly marks: AnnouncedMarks;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    options: GonePlacesOptions = {},
  ) {
    this.marks = createAnnouncedMarks({
      redis,
      key: (channelId) => this.key(channelId),
      channel: `${prefix}:discord:gone:changed`,
      connectionName: `${prefix}:discord:gone:changed:cache`,
      what: 'Discord gone-place cache',
      logger: options.logger,
      onInvalidate: options.onInvalidate,
    });
  }

  private key(channelId: string): string {
    return `${this.prefix}:discord:gone:${channelId}`;
  }

  private leftKey(guildId: string): string {
    return `${this.prefix}:discord:left-guild:${guildId}`;
  }

  /** Deleted for good (`why` in plain words, e.g. "was deleted"): Discord's Unknown Channel. */
  async mark(channelIds: readonly string[], why: string, code = '10003', ttlSeconds = GONE_TTL_SECONDS): Promise<void> {
    if (channelIds.length === 0) return;
    await this.marks.write(channelIds, (m) => {
      for (const id of channelIds) m.set(this.key(id), `${code} ${why}`, 'EX', ttlSeconds);
      return m;
    });
  }

  /** THREAD_UPDATE: a thread locked and archived refuses the bot's posts (50083) until it is unlocked or unarchived. */
  async threadClosed(threadId: string, closed: boolean): Promise<void> {
    if (closed) await this.mark([threadId], 'is a locked, archived thread', '50083', LOCKED_TTL_SECONDS);
    else await this.marks.write([threadId], (m) => m.del(this.key(threadId)));
  }

  /** The bot was removed from the guild: its channels are gone until it is added back. */
  async leftGuild(guildId: string, channelIds: readonly string[]): Promise<void> {
    const why = `10003 is in a server (${guildId}) the bot was removed from`;
    // The guild's own key is read by no cache (only by `inGuild`): its channels are what is announced.
    await this.marks.write(channelIds, (m) => {
      m.set(this.leftKey(guildId), '1', 'EX', GONE_TTL_SECONDS);
      for (const id of channelIds) m.set(this.key(id), why, 'EX', GONE_TTL_SECONDS);
      return m;
    });
  }

  /** GUILD_CREATE: the bot is in the guild (again); channels marked when it left are back. */
  async inGuild(guildId: string, channelIds: readonly string[]): Promise<void> {
    // Sent for every guild at every start: only a guild the bot had left costs a write.
    if ((await this.redis.exists(this.leftKey(guildId))) === 0) return;
    await this.marks.write(channelIds, (m) => m.del(this.leftKey(guildId), ...channelIds.map((id) => this.key(id))));
  }

  /** Why nothing can be posted in the channel any more, or undefined when nothing says so. */
  async why(channelId: string): Promise<Gone | undefined> {
    const value = await this.marks.get(channelId);
    if (!value) return undefined;
    const at = value.indexOf(' ');
    return { code: value.slice(0, at), why: value.slice(at + 1) };
  }

  /** Resolves once the subscription is live (it starts with the first lookup). */
  ready(): Promise<void> {
    return this.marks.ready();
  }

  /** Ends the subscription (idempotent): on shutdown, with the reply port. */
  close(): Promise<void> {
    return this.marks.close();
  }
}
