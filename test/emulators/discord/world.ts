/**
 * The fixed world of the Discord emulator: one guild with channels, a thread, roles and users,
 * plus DM channels. IDs are 18-digit snowflakes, as discord.js expects (mention parsing needs 17–19).
 */

export const PERMISSIONS = {
  ViewChannel: 1n << 10n,
  SendMessages: 1n << 11n,
  ManageGuild: 1n << 5n,
  ReadMessageHistory: 1n << 16n,
  SendMessagesInThreads: 1n << 38n,
} as const;

export const CHANNEL_TYPES = { GuildText: 0, DM: 1, PublicThread: 11, PrivateThread: 12 } as const;

/** A public (11) or private (12) thread. */
export const isThread = (ch: EmuChannel): boolean => ch.type === CHANNEL_TYPES.PublicThread || ch.type === CHANNEL_TYPES.PrivateThread;

export interface EmuUser {
  id: string;
  username: string;
  globalName: string | null;
  bot?: boolean;
  /** Role IDs in the guild. */
  roles: string[];
  /** Member permissions in the guild (what interactions carry), as Discord's decimal string. */
  permissions: string;
}

export interface EmuChannel {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  parentId?: string;
  /** For DM channels: the other user. */
  recipientId?: string;
  /** The bot's role is denied Send Messages (and in Threads) here, by a permission overwrite. */
  botMayNotPost?: boolean;
  /** Set by `setBotMayReact(…, false)`: the bot's reactions there answer 403 (50013). */
  botMayNotReact?: boolean;
  /**
   * A thread archived (`setThreadArchived`): a post unarchives it, unless it is also `locked`; no
   * edits there, and GUILD_CREATE leaves it out (Discord syncs active threads only).
   */
  archived?: boolean;
  /** A locked thread: once archived, only moderators may post (the bot gets 400, code 50083). */
  locked?: boolean;
}

let counter = 0n;
/** A fresh snowflake (timestamp + counter), unique within the process. */
export function snowflake(): string {
  counter += 1n;
  return (((BigInt(Date.now()) - 1_420_070_400_000n) << 22n) | (counter & 0x3fffffn)).toString();
}

const perms = (...bits: bigint[]) => bits.reduce((a, b) => a | b, 0n).toString();
// As Discord's default @everyone: Send Messages in Threads included.
const MEMBER = perms(PERMISSIONS.ViewChannel, PERMISSIONS.SendMessages, PERMISSIONS.SendMessagesInThreads, PERMISSIONS.ReadMessageHistory);

/** A guild beyond the main one, with one text channel: for multi-shard tests. */
export interface EmuGuild {
  id: string;
  name: string;
  channel: EmuChannel;
}

/**
 * Guild `k` of the extra guilds lands on shard `k % shardCount` for any power-of-two count up to
 * 2^36: its ID is `(2^36 + k) << 22` (18 digits, a valid snowflake).
 */
export function extraGuildId(k: number): string {
  return (((1n << 36n) + BigInt(k)) << 22n).toString();
}

function extraGuilds(count: number): EmuGuild[] {
  return Array.from({ length: count }, (_, k) => {
    const id = extraGuildId(k);
    const channelId = (BigInt(id) + 1n).toString();
    return { id, name: `Extra Guild ${k}`, channel: { id: channelId, type: CHANNEL_TYPES.GuildText, name: `general-${k}`, guildId: id } };
  });
}

export function createWorld(options: { extraGuilds?: number; rolePermissions?: string } = {}) {
  const rolePermissions = options.rolePermissions ?? MEMBER;
  const guildId = '900000000000000001';
  const adminRoleId = '900000000000000050';
  const botRoleId = '900000000000000051';
  const bot: EmuUser = {
    id: '910000000000000001',
    username: 'agent-bridge',
    globalName: null,
    bot: true,
    roles: [botRoleId],
    permissions: MEMBER,
  };
  const users = {
    /** Has Manage Server. */
    alice: { id: '920000000000000001', username: 'alice', globalName: 'Alice', roles: [], permissions: perms(BigInt(MEMBER), PERMISSIONS.ManageGuild) },
    /** A plain member. */
    bob: { id: '920000000000000002', username: 'bob', globalName: 'Bob', roles: [], permissions: MEMBER },
    /** No Manage Server, but the admin role (DISCORD_ADMIN_ROLE_IDS). */
    carol: { id: '920000000000000003', username: 'carol', globalName: 'Carol', roles: [adminRoleId], permissions: MEMBER },
    /** Another bot in the guild. */
    otherBot: { id: '920000000000000004', username: 'other-bot', globalName: null, bot: true, roles: [], permissions: MEMBER },
  } satisfies Record<string, EmuUser>;
  const channels = {
    general: { id: '930000000000000001', type: CHANNEL_TYPES.GuildText, name: 'general', guildId },
    bound: { id: '930000000000000002', type: CHANNEL_TYPES.GuildText, name: 'agents', guildId },
    thread: { id: '930000000000000003', type: CHANNEL_TYPES.PublicThread, name: 'a thread', guildId, parentId: '930000000000000001' },
    boundThread: { id: '930000000000000004', type: CHANNEL_TYPES.PublicThread, name: 'bound thread', guildId, parentId: '930000000000000002' },
    dmAlice: { id: '940000000000000001', type: CHANNEL_TYPES.DM, recipientId: users.alice.id },
    dmBob: { id: '940000000000000002', type: CHANNEL_TYPES.DM, recipientId: users.bob.id },
  } satisfies Record<string, EmuChannel>;
  return {
    guildId,
    guildName: 'Emulated Guild',
    applicationId: bot.id,
    adminRoleId,
    botRoleId,
    bot,
    users,
    channels,
    /** Threads started while the emulator runs (`createThread`). */
    laterThreads: [] as EmuChannel[],
    /** More guilds (one channel each), spread over shards; the main guild stays `guildId`. */
    extraGuilds: extraGuilds(options.extraGuilds ?? 0),
    /** Guilds the bot was removed from (`removeBotFromGuild`): not in READY, requests in their channels answer 403 (50001). */
    leftGuilds: new Set<string>(),
    roles: [
      { id: guildId, name: '@everyone', permissions: rolePermissions, position: 0, managed: false },
      { id: adminRoleId, name: 'agent-admins', permissions: '0', position: 1, managed: false },
      { id: botRoleId, name: 'agent-bridge', permissions: rolePermissions, position: 2, managed: true, tags: { bot_id: bot.id } },
    ],
  };
}

export type World = ReturnType<typeof createWorld>;

export function allChannels(world: World): EmuChannel[] {
  return [...Object.values(world.channels), ...world.laterThreads, ...world.extraGuilds.map((g) => g.channel)];
}

/** Every guild ID the bot is in, the main one first. */
export function allGuildIds(world: World): string[] {
  return [world.guildId, ...world.extraGuilds.map((g) => g.id)].filter((id) => !world.leftGuilds.has(id));
}

/** The shard Discord routes a guild's events to; DMs (no guild) go to shard 0. */
export function shardOf(guildId: string | undefined, shardCount: number): number {
  if (!guildId || shardCount <= 1) return 0;
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

export function allUsers(world: World): EmuUser[] {
  return [world.bot, ...Object.values(world.users)];
}
