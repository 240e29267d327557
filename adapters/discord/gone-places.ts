import type { Redis } from 'ioredis';

/**
 * How long a channel stays known as gone. Discord never reuses a deleted channel's ID, so this
 * only bounds what Redis keeps: messages queued there are long given up on by then.
 */
const GONE_TTL_SECONDS = 30 * 24 * 3600;

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

  /** `why` in plain words, e.g. "was deleted". */
  async mark(channelIds: readonly string[], why: string): Promise<void> {
    if (channelIds.length === 0) return;
    const batch = this.redis.multi();
    for (const id of channelIds) batch.set(this.key(id), why, 'EX', GONE_TTL_SECONDS);
    await batch.exec();
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
  async why(channelId: string): Promise<string | undefined> {
    return (await this.redis.get(this.key(channelId))) ?? undefined;
  }
}
