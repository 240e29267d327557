import { conversationsHistory, conversationsReplies, historyScope, parseMetadata } from './history.js';
import type { EmulatedChannel, SlackState, StoredMessage } from './state.js';
import { validateBlocks, validateView } from './validate.js';

export type Params = Record<string, string>;
export type MethodResult = Record<string, unknown>;
type Method = (p: Params, state: SlackState) => MethodResult;

/** Slack truncates (and the emulator refuses) text past this many characters. */
export const MAX_TEXT = 40_000;
/** How long a trigger_id may be exchanged for a modal. */
export const TRIGGER_TTL_MS = 3_000;

const CHANNEL = /^[CGD][A-Z0-9]{2,}$/;
const USER = /^[UW][A-Z0-9]{2,}$/;
const TS = /^\d+\.\d+$/;
const fail = (error: string, extra: MethodResult = {}): MethodResult => ({ ok: false, error, ...extra });

/** Channel checks shared by the posting methods; a user ID as channel means the bot's DM with them. */
function channelProblem(channel: string | undefined, state: SlackState): string | undefined {
  if (!channel) return 'channel_not_found';
  if (USER.test(channel) && state.users.has(channel)) return undefined;
  if (!CHANNEL.test(channel)) return 'channel_not_found';
  const c = state.channels.get(channel);
  if (c?.deleted) return 'channel_not_found';
  if (c && c.member === false && hiddenFromBot(c)) return 'channel_not_found';
  if (c?.archived) return 'is_archived';
  if (c && c.member === false) return 'not_in_channel';
  return undefined;
}

const isPrivate = (c: EmulatedChannel | undefined, id: string): boolean => c?.private ?? id.startsWith('G');

/** A DM between other people, or a private channel the bot is not in: Slack says it does not exist. */
function hiddenFromBot(c: EmulatedChannel): boolean {
  return c.id.startsWith('D') || isPrivate(c, c.id);
}

/** The person the bot's DM is with: as declared, else the first person who wrote in it. */
function imUser(id: string, state: SlackState): string | undefined {
  const declared = state.channels.get(id)?.user;
  if (declared) return declared;
  return state.messages.find((m) => m.channel === id && m.user && m.user !== state.identity.botUserId && !m.bot_id)?.user;
}

/** The read scope `conversations.info` needs for a conversation, from its ID's kind. */
function infoScope(channel: string | undefined): string {
  if (channel?.startsWith('D')) return 'im:read';
  if (channel?.startsWith('G')) return 'groups:read';
  return 'channels:read';
}

/** `conversations.info`: what the bot can see of a conversation (a channel it is in or not, its own DMs). */
function conversationsInfo(p: Params, s: SlackState): MethodResult {
  const id = p.channel;
  if (!id || !CHANNEL.test(id)) return fail('channel_not_found');
  const c = s.channels.get(id);
  if (c?.deleted) return fail('channel_not_found');
  if (c && c.member === false && hiddenFromBot(c)) return fail('channel_not_found');
  const created = 1_700_000_000;
  if (id.startsWith('D')) {
    const user = imUser(id, s);
    return { channel: { id, created, is_im: true, is_org_shared: false, ...(user ? { user } : {}), is_user_deleted: false, priority: 0 } };
  }
  return {
    channel: {
      id,
      name: id.toLowerCase(),
      created,
      is_channel: !isPrivate(c, id),
      is_group: isPrivate(c, id),
      is_im: false,
      is_mpim: false,
      is_private: isPrivate(c, id),
      is_archived: c?.archived === true,
      is_general: false,
      is_member: c?.member !== false,
    },
  };
}

/** A JSON list argument as posted (`blocks`, `attachments`), kept as is; undefined when absent or not a list. */
function jsonList(raw: string | undefined): unknown[] | undefined {
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function contentProblem(p: Params): MethodResult | undefined {
  if (!p.text && !p.blocks && !p.attachments) return fail('no_text');
  if (p.text && p.text.length > MAX_TEXT) return fail('msg_too_long');
  if (p.blocks) {
    const b = validateBlocks(p.blocks);
    if (b) return fail(b.error, b.detail ? { response_metadata: { messages: [b.detail] } } : {});
  }
  return undefined;
}

function userObject(state: SlackState, id: string) {
  const u = state.users.get(id)!;
  return {
    id: u.id,
    team_id: u.teamId ?? state.identity.teamId,
    name: u.name.toLowerCase().replace(/\s+/g, '.'),
    deleted: u.deleted === true,
    is_restricted: u.guest !== undefined,
    is_ultra_restricted: u.guest === 'single',
    ...(u.enterpriseId ? { enterprise_user: { id: u.id, enterprise_id: u.enterpriseId, enterprise_name: u.enterpriseId, is_admin: false, is_owner: false, teams: [u.teamId ?? state.identity.teamId] } } : {}),
    real_name: u.name,
    is_admin: u.isAdmin === true,
    is_owner: u.isOwner === true,
    is_primary_owner: false,
    is_bot: u.isBot === true,
    profile: { display_name: u.name, real_name: u.name },
  };
}

/** The bot scope each method needs (Slack answers `missing_scope` without it); absent → none. */
export const METHOD_SCOPES: Record<string, (p: Params) => string> = {
  'chat.postMessage': () => 'chat:write',
  'chat.postEphemeral': () => 'chat:write',
  'reactions.add': () => 'reactions:write',
  'reactions.remove': () => 'reactions:write',
  'users.info': () => 'users:read',
  'conversations.history': (p) => historyScope(p.channel),
  'conversations.replies': (p) => historyScope(p.channel),
  'conversations.info': (p) => infoScope(p.channel),
  'files.info': () => 'files:read',
};

export const METHODS: Record<string, Method> = {
  // The full file object (Slack Connect events carry only a stub: `file_access: check_file_info`).
  'files.info': (p, s) => {
    const file = p.file ? s.fileInfos.get(p.file) : undefined;
    return file ? { file, comments: [], response_metadata: { next_cursor: '' } } : fail('file_not_found');
  },
  'auth.test': (_p, s) => ({
    url: 'https://emulated.slack.com/',
    team: 'Emulated',
    user: 'agent-bridge',
    team_id: s.identity.teamId,
    user_id: s.identity.botUserId,
    bot_id: s.identity.botId,
    is_enterprise_install: false,
  }),

  'chat.postMessage': (p, s) => {
    const problem = channelProblem(p.channel, s);
    if (problem) return fail(problem);
    const content = contentProblem(p);
    if (content) return content;
    if (p.thread_ts && !TS.test(p.thread_ts)) return fail('invalid_thread_ts');
    const { metadata, error } = parseMetadata(p.metadata);
    if (error) return fail(error);
    const channel = p.channel!;
    const ts = s.nextTs();
    const blocks = jsonList(p.blocks);
    const attachments = jsonList(p.attachments);
    const message: StoredMessage = {
      ts,
      channel,
      text: p.text ?? '',
      user: s.identity.botUserId,
      bot_id: s.identity.botId,
      ...(p.thread_ts ? { thread_ts: p.thread_ts } : {}),
      ...(blocks ? { blocks } : {}),
      ...(attachments ? { attachments } : {}),
      ...(metadata ? { metadata } : {}),
      reactions: new Map(),
    };
    s.addMessage(message);
    // Slack takes the "is thinking…" line down when the app answers in the thread.
    if (p.thread_ts) s.assistantStatuses.delete(`${channel} ${p.thread_ts}`);
    return {
      channel,
      ts,
      message: { type: 'message', text: message.text, user: message.user, bot_id: message.bot_id, ts, thread_ts: p.thread_ts, ...(blocks ? { blocks } : {}), ...(attachments ? { attachments } : {}), ...(metadata ? { metadata } : {}) },
    };
  },

  'chat.postEphemeral': (p, s) => {
    const problem = channelProblem(p.channel, s);
    if (problem) return fail(problem);
    if (!p.user || !USER.test(p.user)) return fail('user_not_found');
    return contentProblem(p) ?? { message_ts: s.nextTs() };
  },

  'reactions.add': (p, s) => reaction(p, s, 'add'),
  'reactions.remove': (p, s) => reaction(p, s, 'remove'),

  'users.info': (p, s) => (p.user && s.users.has(p.user) ? { user: userObject(s, p.user) } : fail('user_not_found')),

  'views.open': (p, s) => {
    const trigger = p.trigger_id ? s.triggers.get(p.trigger_id) : undefined;
    if (!trigger) return fail('invalid_trigger_id');
    if (trigger.used) return fail('exchanged_trigger_id');
    if (Date.now() - trigger.issuedAt > TRIGGER_TTL_MS) return fail('expired_trigger_id');
    const { view, error, detail } = validateView(p.view);
    if (!view) return fail(error!, { response_metadata: { messages: [detail] } });
    trigger.used = true;
    const id = s.nextId('V');
    const stored = { ...view, id, hash: s.nextId('h'), state: { values: {} }, team_id: s.identity.teamId, app_id: s.identity.appId };
    s.views.set(id, stored);
    return { view: stored };
  },

  'views.update': (p, s) => {
    const existing = p.view_id ? s.views.get(p.view_id) : undefined;
    if (!existing) return fail('not_found');
    const { view, error, detail } = validateView(p.view);
    if (!view) return fail(error!, { response_metadata: { messages: [detail] } });
    const stored = { ...view, id: p.view_id, hash: s.nextId('h'), state: { values: {} } };
    s.views.set(p.view_id!, stored);
    return { view: stored };
  },

  'conversations.replies': conversationsReplies,
  'conversations.history': conversationsHistory,
  'conversations.info': conversationsInfo,
};

function reaction(p: Params, s: SlackState, op: 'add' | 'remove'): MethodResult {
  if (!p.name || !/^[a-z0-9_+'-]+$/.test(p.name)) return fail('invalid_name');
  if (!p.channel || !p.timestamp) return fail('no_item_specified');
  // As Slack: nothing is added to or taken from a message of an archived or deleted channel.
  const c = s.channels.get(p.channel);
  if (c?.deleted) return fail('channel_not_found');
  if (c?.archived) return fail('is_archived');
  const message = s.findMessage(p.channel, p.timestamp);
  if (!message) return fail('message_not_found');
  const by = message.reactions.get(p.name) ?? new Set<string>();
  if (op === 'add') {
    if (by.has(s.identity.botUserId)) return fail('already_reacted');
    by.add(s.identity.botUserId);
    message.reactions.set(p.name, by);
  } else {
    if (!by.delete(s.identity.botUserId)) return fail('no_reaction');
    if (by.size === 0) message.reactions.delete(p.name);
  }
  return {};
}
