import type { Redis } from 'ioredis';

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

/**
 * Channels and threads the bot can no longer post in for good, shared through Redis: the ingress
 * learns it from the gateway (CHANNEL_DELETE, THREAD_DELETE, GUILD_DELETE when the bot was
 * removed) and a worker from a 404 Unknown Channel; every worker reads it right before a billed
 * agent call (the reply port's `ready`), so a message queued for such a place is not sent.
 */
export class GonePlaces {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  private key(channelId: string): string {
    return `${this.prefix}:discord:gone:${channelId}`;
  }

  private leftKey(guildId: string): string {
    return `${this.prefix}:discord:left-guild:${guildId}`;
  }

  /** Deleted for good (`why` in plain words, e.g. "was deleted"): Discord's Unknown Channel. */
  async mark(channelIds: readonly string[], why: string, code = '10003', ttlSeconds = GONE_TTL_SECONDS): Promise<void> {
    if (channelIds.length === 0) return;
    const batch = this.redis.multi();
    for (const id of channelIds) batch.set(this.key(id), `${code} ${why}`, 'EX', ttlSeconds);
    await batch.exec();
  }

  /** THREAD_UPDATE: a thread locked and archived refuses the bot's posts (50083) until it is unlocked or unarchived. */
  async threadClosed(threadId: string, closed: boolean): Promise<void> {
    if (closed) await this.mark([threadId], 'is a locked, archived thread', '50083', LOCKED_TTL_SECONDS);
    else await this.redis.del(this.key(threadId));
  }

  /** The bot was removed from the guild: its channels are gone until it is added back. */
  async leftGuild(guildId: string, channelIds: readonly string[]): Promise<void> {
    await this.redis.set(this.leftKey(guildId), '1', 'EX', GONE_TTL_SECONDS);
    await this.mark(channelIds, `is in a server (${guildId}) the bot was removed from`);
  }

  /** GUILD_CREATE: the bot is in the guild (again); channels marked when it left are back. */
  async inGuild(guildId: string, channelIds: readonly string[]): Promise<void> {
    if ((await this.redis.del(this.leftKey(guildId))) === 0 || channelIds.length === 0) return;
    await this.redis.del(...channelIds.map((id) => this.key(id)));
  }

  /** Why nothing can be posted in the channel any more, or undefined when nothing says so. */
  async why(channelId: string): Promise<Gone | undefined> {
    const value = await this.redis.get(this.key(channelId));
    if (!value) return undefined;
    const at = value.indexOf(' ');
    return { code: value.slice(0, at), why: value.slice(at + 1) };
  }
}
