/**
 * Builders of Discord API objects (v10 shapes) for the emulator's REST answers and gateway events.
 */
import { CHANNEL_TYPES, PERMISSIONS, allChannels, allUsers, isThread, type EmuChannel, type EmuUser, type World } from './world.js';

export type Json = Record<string, any>;

export function userObject(u: EmuUser): Json {
  return {
    id: u.id,
    username: u.username,
    discriminator: '0',
    global_name: u.globalName,
    avatar: null,
    ...(u.bot ? { bot: true } : {}),
    public_flags: 0,
  };
}

export function memberObject(u: EmuUser, withUser: boolean): Json {
  return {
    ...(withUser ? { user: userObject(u) } : {}),
    roles: u.roles,
    nick: null,
    avatar: null,
    joined_at: '2024-01-01T00:00:00.000000+00:00',
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
  };
}

/** A role overwrite (type 0) denying the bot's role Send Messages and Send Messages in Threads. */
function overwritesOf(ch: EmuChannel, world: World): Json[] {
  if (!ch.botMayNotPost) return [];
  const deny = (PERMISSIONS.SendMessages | PERMISSIONS.SendMessagesInThreads).toString();
  return [{ id: world.botRoleId, type: 0, allow: '0', deny }];
}

/** `app_permissions` Discord sends with an interaction in a DM: a fixed set, posting included. */
const DM_APP_PERMISSIONS = '2248473465835073';

/**
 * The bot's permissions in a channel, as Discord computes them for an interaction's
 * `app_permissions`: its roles' (the bot role and @everyone), less what the channel's overwrites
 * deny (`setBotMayPost(false)` on the channel, or on a thread's parent, whose overwrites it follows).
 */
export function botPermissionsIn(ch: EmuChannel, world: World): string {
  if (ch.guildId === undefined) return DM_APP_PERMISSIONS;
  const everyone = world.roles.find((r) => r.id === world.guildId);
  const botRole = world.roles.find((r) => r.id === world.botRoleId);
  let bits = BigInt(everyone?.permissions ?? '0') | BigInt(botRole?.permissions ?? '0');
  const parent = ch.parentId ? allChannels(world).find((c) => c.id === ch.parentId) : undefined;
  if (ch.botMayNotPost || parent?.botMayNotPost) bits &= ~(PERMISSIONS.SendMessages | PERMISSIONS.SendMessagesInThreads);
  return bits.toString();
}

export function channelObject(ch: EmuChannel, world: World): Json {
  if (ch.type === CHANNEL_TYPES.DM) {
    const other = allUsers(world).find((u) => u.id === ch.recipientId);
    return { id: ch.id, type: ch.type, last_message_id: null, recipients: other ? [userObject(other)] : [], flags: 0 };
  }
  const base = { id: ch.id, type: ch.type, guild_id: ch.guildId, name: ch.name, position: 0, permission_overwrites: overwritesOf(ch, world), flags: 0 };
  if (isThread(ch)) {
    const isPrivate = ch.type === CHANNEL_TYPES.PrivateThread;
    return {
      ...base,
      parent_id: ch.parentId,
      owner_id: world.users.alice.id,
      message_count: 0,
      member_count: 1,
      thread_metadata: {
        archived: ch.archived === true,
        auto_archive_duration: 1440,
        archive_timestamp: '2024-01-01T00:00:00.000000+00:00',
        locked: ch.locked === true,
        // Private threads only: whether non-moderators may add others.
        ...(isPrivate ? { invitable: true } : {}),
      },
    };
  }
  return { ...base, topic: null, nsfw: false, last_message_id: null, rate_limit_per_user: 0, parent_id: null };
}

export function guildCreate(world: World, guildId: string = world.guildId): Json {
  const guildChannels = allChannels(world).filter((c) => c.guildId === guildId);
  const extra = world.extraGuilds.find((g) => g.id === guildId);
  return {
    id: guildId,
    name: extra?.name ?? world.guildName,
    icon: null,
    owner_id: world.users.alice.id,
    unavailable: false,
    large: false,
    member_count: 5,
    joined_at: '2024-01-01T00:00:00.000000+00:00',
    features: [],
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
    premium_tier: 0,
    preferred_locale: 'en-US',
    nsfw_level: 0,
    system_channel_id: null,
    roles: (extra ? [{ ...world.roles[0]!, id: guildId }, ...world.roles.slice(2)] : world.roles).map((r) => ({ color: 0, hoist: false, mentionable: false, flags: 0, icon: null, unicode_emoji: null, ...r })),
    channels: guildChannels.filter((c) => !isThread(c)).map((c) => channelObject(c, world)),
    // Only active threads: Discord syncs archived ones to no one up front.
    threads: guildChannels.filter((c) => isThread(c) && c.archived !== true).map((c) => channelObject(c, world)),
    members: [memberObject(world.bot, true)],
    emojis: [],
    stickers: [],
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/** User IDs written as `<@id>` / `<@!id>` in the content. */
export function mentionedIds(content: string): string[] {
  return [...new Set([...content.matchAll(/<@!?(\d{17,20})>/g)].map((m) => m[1]!))];
}

export interface MessageInput {
  id: string;
  channel: EmuChannel;
  author: EmuUser;
  content: string;
  world: World;
  /** Users actually pinged (Discord lists them in `mentions`). */
  mentions: EmuUser[];
  mentionEveryone?: boolean;
  reference?: Json;
  referenced?: Json | null;
  attachments?: Json[];
  type?: number;
  nonce?: string;
  webhookId?: string;
  /** Action rows (buttons) as the bot sent them. */
  components?: Json[];
  embeds?: Json[];
  poll?: Json;
  /** `message_snapshots` of a forward. */
  snapshots?: Json[];
  flags?: number;
}

/** A poll object as Discord sends it (answer IDs from 1, a day's expiry, no results yet). */
export function pollObject(p: { question: string; answers: string[] }): Json {
  return {
    question: { text: p.question },
    answers: p.answers.map((text, i) => ({ answer_id: i + 1, poll_media: { text } })),
    expiry: new Date(Date.now() + 86_400_000).toISOString(),
    allow_multiselect: false,
    layout_type: 1,
  };
}

/** HAS_SNAPSHOT: the message is a forward carrying `message_snapshots`. */
export const HAS_SNAPSHOT = 1 << 14;

/**
 * The snapshot a forward of `original` carries: a subset of the message's fields (Discord's
 * message snapshot object), without author, id or channel.
 */
export function snapshotOf(original: Json): Json {
  const fields = ['type', 'content', 'embeds', 'attachments', 'timestamp', 'edited_timestamp', 'flags', 'mentions', 'mention_roles', 'sticker_items', 'components'];
  return { message: Object.fromEntries(fields.filter((f) => original[f] !== undefined).map((f) => [f, original[f]])) };
}

/** A message as a bot reads it without the Message Content intent: content, embeds, files, components and poll blank, in forwarded snapshots too. */
export function blankContent(m: Json): Json {
  const blank = { content: '', embeds: [], attachments: [], components: [] };
  const { poll: _poll, ...rest } = m;
  return {
    ...rest,
    ...blank,
    ...(Array.isArray(m.message_snapshots) ? { message_snapshots: (m.message_snapshots as Json[]).map((s) => ({ ...s, message: { ...s.message, ...blank } })) } : {}),
  };
}

/** A message object as REST returns it and MESSAGE_CREATE carries it (gateway extras added by the gateway). */
export function messageObject(m: MessageInput): Json {
  const inGuild = m.channel.guildId !== undefined;
  return {
    id: m.id,
    channel_id: m.channel.id,
    ...(inGuild ? { guild_id: m.channel.guildId } : {}),
    author: userObject(m.author),
    content: m.content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: m.mentionEveryone ?? false,
    mentions: m.mentions.map((u) => ({ ...userObject(u), ...(inGuild ? { member: memberObject(u, false) } : {}) })),
    mention_roles: [],
    attachments: m.attachments ?? [],
    embeds: m.embeds ?? [],
    pinned: false,
    type: m.type ?? (m.reference && m.reference.type !== 1 ? 19 : 0),
    flags: m.flags ?? 0,
    components: m.components ?? [],
    ...(m.nonce !== undefined ? { nonce: m.nonce } : {}),
    ...(m.webhookId ? { webhook_id: m.webhookId } : {}),
    // A forward (reference type 1) has no `referenced_message`: its snapshot stands for it.
    ...(m.reference ? { message_reference: m.reference, ...(m.reference.type === 1 ? {} : { referenced_message: m.referenced ?? null }) } : {}),
    ...(m.snapshots ? { message_snapshots: m.snapshots } : {}),
    ...(m.poll ? { poll: m.poll } : {}),
  };
}

/** The extra fields MESSAGE_CREATE carries over REST's message object. */
export function messageCreateEvent(message: Json, channel: EmuChannel, author: EmuUser): Json {
  return {
    ...message,
    channel_type: channel.type,
    ...(channel.guildId ? { member: memberObject(author, false) } : {}),
  };
}
