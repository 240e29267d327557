import { Options, type ClientOptions, type GuildMember, type User } from 'discord.js';

/**
 * What the gateway client keeps in memory. discord.js's defaults keep every user and guild
 * member it ever saw (each message's author comes with both) for the life of the process, and
 * the last 200 messages of every channel: in a busy server a process that runs for weeks grows
 * by megabytes a day, and a bot in many servers by far more. The bridge reads little from these
 * caches (the bot's own member, for its permissions; a replied-to message, with a REST fetch when
 * it is not cached), so they are bounded here.
 */
export const GATEWAY_CACHE_LIMITS = {
  /** Users kept (the bot itself always). */
  users: 1_000,
  /** Members kept per guild (the bot's own member always). */
  membersPerGuild: 100,
  /** Messages kept per channel, and for how long at most (swept every `messageSweepSeconds`). */
  messagesPerChannel: 50,
  messageLifetimeSeconds: 3_600,
  messageSweepSeconds: 900,
} as const;

const isTheBot = (entry: User | GuildMember) => entry.id === entry.client.user?.id;

/** `makeCache` and `sweepers` for the gateway client, on top of discord.js's defaults. */
export function gatewayCacheOptions(limits = GATEWAY_CACHE_LIMITS): Pick<ClientOptions, 'makeCache' | 'sweepers'> {
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
