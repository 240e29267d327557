import { ChannelType, Options, SnowflakeUtil, type Client, type ClientOptions, type GuildMember, type User } from 'discord.js';

/**
 * What the gateway client keeps in memory. discord.js's defaults keep every user and guild
 * member it ever saw (each message's author comes with both) for the life of the process, and
 * the last 200 messages of every channel: in a busy server a process that runs for weeks grows
 * by megabytes a day, and a bot in many servers by far more. The bridge reads little from these
 * caches (the bot's own member, for its permissions; a replied-to message, with a REST fetch when
 * it is not cached), so they are bounded here.
 */
export interface GatewayCacheLimits {
  users: number;
  membersPerGuild: number;
  messagesPerChannel: number;
  messageLifetimeSeconds: number;
  messageSweepSeconds: number;
  directMessageIdleSeconds: number;
}

export const GATEWAY_CACHE_LIMITS: Readonly<GatewayCacheLimits> = {
  /** Users kept (the bot itself always). */
  users: 1_000,
  /** Members kept per guild (the bot's own member always). */
  membersPerGuild: 100,
  /** Messages kept per channel, and for how long at most (swept every `messageSweepSeconds`). */
  messagesPerChannel: 50,
  messageLifetimeSeconds: 3_600,
  messageSweepSeconds: 900,
  /** A DM channel with no message for this long is dropped from the cache (checked as often as messages). */
  directMessageIdleSeconds: 3_600,
};

const isTheBot = (entry: User | GuildMember) => entry.id === entry.client.user?.id;

/** `makeCache` and `sweepers` for the gateway client, on top of discord.js's defaults. */
export function gatewayCacheOptions(limits: Readonly<GatewayCacheLimits> = GATEWAY_CACHE_LIMITS): Pick<ClientOptions, 'makeCache' | 'sweepers'> {
  return {
    makeCache: Options.cacheWithLimits({
      ...Options.DefaultMakeCacheSettings,
      MessageManager: limits.messagesPerChannel,
      UserManager: { maxSize: limits.users, keepOverLimit: isTheBot },
      GuildMemberManager: { maxSize: limits.membersPerGuild, keepOverLimit: isTheBot },
    }),
    sweepers: {
      ...Options.DefaultSweeperSettings,
      messages: { interval: limits.messageSweepSeconds, lifetime: limits.messageLifetimeSeconds },
    },
  };
}

/**
 * Drops DM channels idle for `directMessageIdleSeconds` from the client's channel cache, every
 * `messageSweepSeconds`, until the client is destroyed. discord.js keeps a DM channel for every
 * person who ever wrote to the bot, and offers no sweeper for them (its channel cache may not be
 * limited). A DM written to again is built afresh from its message (`Partials.Channel`), as after
 * a restart. Returns the client.
 */
export function sweepIdleDirectMessages(client: Client, limits: Readonly<GatewayCacheLimits> = GATEWAY_CACHE_LIMITS, now: () => number = Date.now): Client {
  const sweep = () => {
    const before = now() - limits.directMessageIdleSeconds * 1_000;
    for (const [id, channel] of client.channels.cache) {
      if (channel.type !== ChannelType.DM) continue;
      const lastAt = channel.lastMessageId ? SnowflakeUtil.timestampFrom(channel.lastMessageId) : 0;
      if (lastAt < before) client.channels.cache.delete(id);
    }
  };
  const timer = setInterval(sweep, limits.messageSweepSeconds * 1_000).unref();
  const destroy = client.destroy.bind(client);
  client.destroy = () => {
    clearInterval(timer);
    return destroy();
  };
  return client;
}
