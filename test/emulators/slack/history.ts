import type { MessageMetadata, SlackState, StoredMessage } from './state.js';

/**
 * Reading conversations back, as Slack answers `conversations.history` and
 * `conversations.replies`: cursor pagination, `oldest`/`latest`/`inclusive` windows, and
 * message metadata only when `include_all_metadata` asks for it.
 */

type Params = Record<string, string>;
type Result = Record<string, unknown>;

const CHANNEL = /^[CGD][A-Z0-9]{2,}$/;
const TS = /^\d+(\.\d+)?$/;
const fail = (error: string, extra: Result = {}): Result => ({ ok: false, error, ...extra });

/**
 * Arguments Slack documents for the two methods; anything else is refused (catches typos).
 * `team_id` too: Bolt's listener clients add it to every call, and Slack takes it.
 */
const HISTORY_ARGS = new Set(['token', 'team_id', 'channel', 'cursor', 'limit', 'oldest', 'latest', 'inclusive', 'include_all_metadata']);
const REPLIES_ARGS = new Set([...HISTORY_ARGS, 'ts']);

/** Orders Slack timestamps exactly (a double loses the last digits). */
export function compareTs(a: string, b: string): number {
  const [as = '0', af = ''] = a.split('.');
  const [bs = '0', bf = ''] = b.split('.');
  if (as !== bs) return Number(as) < Number(bs) ? -1 : 1;
  const fa = af.padEnd(6, '0');
  const fb = bf.padEnd(6, '0');
  return fa < fb ? -1 : fa > fb ? 1 : 0;
}

/** The scope a bot token needs to read a conversation, from its ID's kind. */
export function historyScope(channel: string | undefined): string {
  if (channel?.startsWith('D')) return 'im:history';
  if (channel?.startsWith('G')) return 'groups:history';
  return 'channels:history';
}

/** `metadata` of `chat.postMessage`: a JSON object `{ event_type, event_payload }`, or the error Slack gives. */
export function parseMetadata(raw: string | undefined): { metadata?: MessageMetadata; error?: string } {
  if (raw === undefined || raw === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: 'invalid_metadata_format' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { error: 'invalid_metadata_format' };
  const { event_type: type, event_payload: payload } = value as Record<string, unknown>;
  if (typeof type !== 'string' || !/^[A-Za-z0-9_]{1,255}$/.test(type)) return { error: 'invalid_metadata_schema' };
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return { error: 'invalid_metadata_schema' };
  return { metadata: { event_type: type, event_payload: payload as Record<string, unknown> } };
}

function argsProblem(p: Params, known: Set<string>): Result | undefined {
  const unknown = Object.keys(p).filter((k) => !known.has(k));
  if (unknown.length > 0) return fail('invalid_arguments', { response_metadata: { messages: [`[ERROR] unknown argument: ${unknown.join(', ')}`] } });
  if (p.oldest !== undefined && !TS.test(p.oldest)) return fail('invalid_ts_oldest');
  if (p.latest !== undefined && !TS.test(p.latest)) return fail('invalid_ts_latest');
  return undefined;
}

function inWindow(m: StoredMessage, p: Params): boolean {
  const inclusive = p.inclusive === 'true' || p.inclusive === '1';
  if (p.oldest !== undefined) {
    const c = compareTs(m.ts, p.oldest);
    if (c < 0 || (c === 0 && !inclusive)) return false;
  }
  if (p.latest !== undefined) {
    const c = compareTs(m.ts, p.latest);
    if (c > 0 || (c === 0 && !inclusive)) return false;
  }
  return true;
}

/** One page of `messages` from `cursor`, Slack's answer shape. */
function page(messages: StoredMessage[], p: Params, defaultLimit: number, maxLimit: number, view: (m: StoredMessage) => Result): Result {
  const limit = Math.min(maxLimit, Math.max(1, Number(p.limit) || defaultLimit));
  let offset = 0;
  if (p.cursor) {
    const decoded = /^offset:(\d+)$/.exec(Buffer.from(p.cursor, 'base64').toString());
    if (!decoded) return fail('invalid_cursor');
    offset = Number(decoded[1]);
  }
  const slice = messages.slice(offset, offset + limit);
  const more = offset + limit < messages.length;
  return {
    messages: slice.map(view),
    has_more: more,
    response_metadata: { next_cursor: more ? Buffer.from(`offset:${offset + limit}`).toString('base64') : '' },
  };
}

function messageView(m: StoredMessage, p: Params, state: SlackState): Result {
  const fromBot = m.user === state.identity.botUserId && m.bot_id === state.identity.botId;
  const withMetadata = p.include_all_metadata === 'true' || p.include_all_metadata === '1';
  return {
    type: 'message',
    ts: m.ts,
    text: m.text,
    ...(m.user ? { user: m.user } : {}),
    ...(m.bot_id ? { bot_id: m.bot_id } : {}),
    ...(m.subtype ? { subtype: m.subtype } : {}),
    ...(fromBot ? { app_id: state.identity.appId } : {}),
    ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
    ...(m.blocks ? { blocks: m.blocks } : {}),
    ...(m.attachments ? { attachments: m.attachments } : {}),
    ...(m.files ? { files: m.files } : {}),
    ...(withMetadata && m.metadata ? { metadata: m.metadata } : {}),
  };
}

/**
 * A bot token reads only conversations the bot is in: a public channel it is not in answers
 * `not_in_channel` ("only user tokens can access public channels they are not in"); a private
 * channel or a DM between other people, which it cannot even see, `channel_not_found`.
 */
function membershipProblem(id: string, state: SlackState): string | undefined {
  const channel = state.channels.get(id);
  if (channel?.deleted) return 'channel_not_found';
  if (!channel || channel.member !== false) return undefined;
  return id.startsWith('D') || (channel.private ?? id.startsWith('G')) ? 'channel_not_found' : 'not_in_channel';
}

/** Newest first, top-level messages only (thread replies stay in their thread). */
export function conversationsHistory(p: Params, state: SlackState): Result {
  const problem = argsProblem(p, HISTORY_ARGS);
  if (problem) return problem;
  if (!p.channel || !CHANNEL.test(p.channel)) return fail('channel_not_found');
  const unreadable = membershipProblem(p.channel, state);
  if (unreadable) return fail(unreadable);
  const messages = state.messages
    .filter((m) => m.channel === p.channel && (!m.thread_ts || m.thread_ts === m.ts) && inWindow(m, p))
    .sort((a, b) => compareTs(b.ts, a.ts));
  const cap = state.readLimits?.pageSize;
  return page(messages, p, cap ?? 100, cap ?? 999, (m) => messageView(m, p, state));
}

/** The thread's parent and replies, oldest first. */
export function conversationsReplies(p: Params, state: SlackState): Result {
  const problem = argsProblem(p, REPLIES_ARGS);
  if (problem) return problem;
  if (!p.channel || !CHANNEL.test(p.channel)) return fail('channel_not_found');
  const unreadable = membershipProblem(p.channel, state);
  if (unreadable) return fail(unreadable);
  if (!p.ts || !TS.test(p.ts) || !state.findMessage(p.channel, p.ts)) return fail('thread_not_found');
  const thread = state.messages
    .filter((m) => m.channel === p.channel && (m.ts === p.ts || m.thread_ts === p.ts) && inWindow(m, p))
    .sort((a, b) => compareTs(a.ts, b.ts));
  const cap = state.readLimits?.pageSize;
  return page(thread, p, cap ?? 1000, cap ?? 1000, (m) => ({ ...messageView(m, p, state), thread_ts: m.thread_ts ?? p.ts }));
}
