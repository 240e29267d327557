import type { Params, MethodResult } from './methods.js';
import type { SlackState } from './state.js';
import type { Json } from './payloads.js';
import { issueTrigger, userMessage } from './payloads.js';

/**
 * Slack's AI app surface, feedback buttons and message shortcuts, as the emulator serves them:
 * the `assistant.threads.*` methods (strict about their arguments, as Slack is), `chat.getPermalink`,
 * and builders of the events and interaction payloads Slack sends.
 */

const DM = /^D[A-Z0-9]{2,}$/;
const CHANNEL = /^[CGD][A-Z0-9]{2,}$/;
const TS = /^\d+\.\d+$/;
const fail = (error: string, detail?: string): MethodResult => ({ ok: false, error, ...(detail ? { response_metadata: { messages: [detail] } } : {}) });

/**
 * The scope each method needs: `assistant:write` (setStatus takes `chat:write` too since
 * March 2026, and will take only that: docs.slack.dev changelog 2026/03/05).
 */
function scopeProblem(state: SlackState, method: string): MethodResult | undefined {
  const held = state.identity.scopes;
  const ok = method === 'assistant.threads.setStatus' ? held.includes('assistant:write') || held.includes('chat:write') : held.includes('assistant:write');
  return ok ? undefined : { ok: false, error: 'missing_scope', needed: method === 'assistant.threads.setStatus' ? 'chat:write' : 'assistant:write', provided: held.join(',') };
}

function threadArgs(state: SlackState, method: string, p: Params): MethodResult | undefined {
  const scope = scopeProblem(state, method);
  if (scope) return scope;
  if (!p.channel_id || !DM.test(p.channel_id)) return fail('channel_not_found', 'channel_id must be the assistant DM');
  if (!p.thread_ts || !TS.test(p.thread_ts)) return fail('invalid_arguments', 'thread_ts is required');
  // A thread Slack does not know in that DM.
  if (!state.findMessage(p.channel_id, p.thread_ts)) return fail('invalid_thread_ts', 'no such thread in this channel');
  return undefined;
}

function jsonArray(raw: string | undefined): unknown[] | undefined {
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function assistantMethods(state: SlackState): Record<string, (p: Params) => MethodResult> {
  return {
    'assistant.threads.setStatus': (p) => {
      const bad = threadArgs(state, 'assistant.threads.setStatus', p);
      if (bad) return bad;
      if (p.status === undefined) return fail('invalid_arguments', 'status is required (empty clears it)');
      if (p.status.length > 50) return fail('invalid_arguments', 'status longer than 50');
      if (p.loading_messages !== undefined) {
        const list = jsonArray(p.loading_messages);
        if (!list || list.length > 10 || list.some((m) => typeof m !== 'string' || !m)) return fail('invalid_arguments', 'loading_messages must be 1-10 strings');
      }
      state.assistantStatuses.set(`${p.channel_id} ${p.thread_ts}`, { status: p.status, setAt: Date.now() });
      return {};
    },
    'assistant.threads.setSuggestedPrompts': (p) => {
      const bad = threadArgs(state, 'assistant.threads.setSuggestedPrompts', p);
      if (bad) return bad;
      const prompts = jsonArray(p.prompts);
      if (!prompts || prompts.length === 0 || prompts.length > 4) return fail('invalid_arguments', 'prompts must hold 1-4 prompts');
      for (const x of prompts) {
        const o = x as Record<string, unknown>;
        if (!o || typeof o.title !== 'string' || !o.title || typeof o.message !== 'string' || !o.message) return fail('invalid_arguments', 'each prompt needs title and message');
      }
      return {};
    },
    'assistant.threads.setTitle': (p) => {
      const bad = threadArgs(state, 'assistant.threads.setTitle', p);
      if (bad) return bad;
      if (!p.title) return fail('invalid_arguments', 'title is required');
      return {};
    },
    'chat.getPermalink': (p) => {
      if (!p.channel || !CHANNEL.test(p.channel)) return fail('channel_not_found');
      if (!p.message_ts || !state.findMessage(p.channel, p.message_ts)) return fail('message_not_found');
      return { channel: p.channel, permalink: `https://emulated.slack.com/archives/${p.channel}/p${p.message_ts.replace('.', '')}` };
    },
  };
}

/**
 * The status line a user sees in an assistant thread now: the last one set, unless the app has
 * posted in the thread since, or it was set longer than the expiry ago (Slack: "A two minute
 * timeout applies, which will cause the status to be removed if no message has been sent").
 */
export function shownAssistantStatus(state: SlackState, channel: string, threadTs: string): string {
  const shown = state.assistantStatuses.get(`${channel} ${threadTs}`);
  if (!shown || Date.now() - shown.setAt >= state.assistantStatusExpiryMs) return '';
  return shown.status;
}

/** `assistant_thread_started`: the user opened the assistant; returns the thread's ts and the event. */
export function assistantThreadStarted(state: SlackState, o: { user: string; dm: string; contextChannel?: string }): { threadTs: string; event: Json } {
  // Slack roots the thread in a message of the user's own, subtype `assistant_app_thread`, whose
  // text is the thread's title ("Chats from <ISO date>" until one is set): docs.slack.dev
  // reference/events/message/assistant_app_thread. The bot has said nothing yet.
  const threadTs = state.nextTs();
  state.addMessage({ ts: threadTs, channel: o.dm, text: `Chats from ${new Date().toISOString()}`, user: o.user, subtype: 'assistant_app_thread', reactions: new Map() });
  return {
    threadTs,
    event: {
      type: 'assistant_thread_started',
      assistant_thread: {
        user_id: o.user,
        context: o.contextChannel ? { channel_id: o.contextChannel, team_id: state.identity.teamId, enterprise_id: null } : {},
        channel_id: o.dm,
        thread_ts: threadTs,
      },
      event_ts: state.nextTs(),
    },
  };
}

/** `assistant_thread_context_changed`: the user looks at another channel with the assistant open. */
export function assistantContextChanged(state: SlackState, o: { user: string; dm: string; threadTs: string; contextChannel: string }): Json {
  return {
    type: 'assistant_thread_context_changed',
    assistant_thread: {
      user_id: o.user,
      context: { channel_id: o.contextChannel, team_id: state.identity.teamId, enterprise_id: null },
      channel_id: o.dm,
      thread_ts: o.threadTs,
    },
    event_ts: state.nextTs(),
  };
}

/** A message the user writes in an assistant thread (`message.im` with thread_ts). */
export function assistantMessage(state: SlackState, o: { user: string; dm: string; threadTs: string; text: string; files?: Json[] }) {
  return userMessage(state, {
    channel: o.dm,
    user: o.user,
    text: o.text,
    threadTs: o.threadTs,
    channelType: 'im',
    ...(o.files ? { files: o.files, subtype: 'file_share' } : {}),
  });
}

/** A click on a message's `feedback_buttons` (`block_actions`). */
export function feedbackClick(state: SlackState, o: { user: string; channel: string; messageTs: string; threadTs?: string; actionId: string; value: string }): Json {
  return {
    type: 'block_actions',
    user: { id: o.user, username: o.user.toLowerCase(), name: o.user.toLowerCase(), team_id: state.identity.teamId },
    api_app_id: state.identity.appId,
    token: 'legacy-verification-token',
    container: { type: 'message', message_ts: o.messageTs, channel_id: o.channel, is_ephemeral: false, ...(o.threadTs ? { thread_ts: o.threadTs } : {}) },
    trigger_id: issueTrigger(state),
    team: { id: state.identity.teamId, domain: 'emulated' },
    channel: { id: o.channel, name: 'general' },
    message: { type: 'message', ts: o.messageTs, ...(o.threadTs ? { thread_ts: o.threadTs } : {}), user: state.identity.botUserId, bot_id: state.identity.botId, text: '' },
    actions: [{ type: 'feedback_buttons', action_id: o.actionId, block_id: 'fb', value: o.value, action_ts: String(Date.now() / 1000) }],
  };
}

/**
 * A global shortcut (`shortcut`, from the composer's shortcuts menu or search): no channel, no
 * message and no response_url; only a trigger_id, good for one views.open within 3 s.
 */
export function globalShortcut(state: SlackState, o: { user: string; callbackId: string }): Json {
  return {
    type: 'shortcut',
    token: 'legacy-verification-token',
    action_ts: String(Date.now() / 1000),
    team: { id: state.identity.teamId, domain: 'emulated' },
    user: { id: o.user, username: o.user.toLowerCase(), team_id: state.identity.teamId },
    is_enterprise_install: false,
    enterprise: null,
    callback_id: o.callbackId,
    trigger_id: issueTrigger(state),
  };
}

/** A message shortcut (`message_action`) on a stored message. */
export function messageShortcut(state: SlackState, o: { user: string; channel: string; messageTs: string; callbackId: string; responseUrl: string }): Json {
  const m = state.findMessage(o.channel, o.messageTs);
  if (!m) throw new Error(`no message ${o.messageTs} in ${o.channel}`);
  return {
    type: 'message_action',
    token: 'legacy-verification-token',
    action_ts: String(Date.now() / 1000),
    team: { id: state.identity.teamId, domain: 'emulated' },
    user: { id: o.user, username: o.user.toLowerCase(), name: o.user.toLowerCase(), team_id: state.identity.teamId },
    // Slack names a DM's channel `directmessage` in interaction payloads.
    channel: { id: o.channel, name: o.channel.startsWith('D') ? 'directmessage' : 'general' },
    is_enterprise_install: false,
    callback_id: o.callbackId,
    trigger_id: issueTrigger(state),
    response_url: o.responseUrl,
    message_ts: o.messageTs,
    // The whole message as stored: an app's blocks and attachments, a forward, its files.
    message: {
      type: 'message',
      ts: m.ts,
      text: m.text,
      ...(m.user ? { user: m.user } : {}),
      ...(m.bot_id ? { bot_id: m.bot_id } : {}),
      ...(m.thread_ts ? { thread_ts: m.thread_ts } : {}),
      ...(m.blocks ? { blocks: m.blocks } : {}),
      ...(m.attachments ? { attachments: m.attachments } : {}),
      ...(m.files ? { files: m.files } : {}),
    },
  };
}
