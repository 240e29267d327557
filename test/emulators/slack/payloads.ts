import type { SlackState } from './state.js';

export type Json = Record<string, unknown>;

export interface UserMessageOptions {
  channel: string;
  user: string;
  text: string;
  /** Reply in this thread. */
  threadTs?: string;
  /** `channel` (default for C…), `group`, `im` (default for D…), `mpim`. */
  channelType?: string;
  subtype?: string;
  botId?: string;
  files?: Json[];
  /** Blocks (another app's message: often an empty `text` and everything here). */
  blocks?: Json[];
  /** Legacy attachments; a forwarded message is one with `is_share: true`. */
  attachments?: Json[];
  /** The workspace it is written in (multi-workspace tests). @defaultValue the emulator's team */
  team?: string;
}

/** Which installation an event is for (multi-workspace tests). */
export interface EventTeam {
  teamId: string;
  enterpriseId?: string;
  isEnterpriseInstall?: boolean;
}

/**
 * A message someone writes: stored (so reactions and conversations.replies see it) and
 * returned as the `message` event and the `app_mention` event Slack would send for it.
 */
export function userMessage(state: SlackState, o: UserMessageOptions): { ts: string; message: Json; mention: Json } {
  const ts = state.nextTs();
  state.addMessage({
    ts,
    channel: o.channel,
    text: o.text,
    ...(o.botId ? { bot_id: o.botId } : { user: o.user }),
    ...(o.threadTs ? { thread_ts: o.threadTs } : {}),
    ...(o.subtype ? { subtype: o.subtype } : {}),
    ...(o.blocks ? { blocks: o.blocks } : {}),
    ...(o.attachments ? { attachments: o.attachments } : {}),
    ...(o.files ? { files: o.files } : {}),
    reactions: new Map(),
  });
  const common: Json = {
    ...(o.botId ? { bot_id: o.botId } : { user: o.user }),
    text: o.text,
    ts,
    team: o.team ?? state.identity.teamId,
    channel: o.channel,
    event_ts: ts,
    ...(o.threadTs ? { thread_ts: o.threadTs } : {}),
    ...(o.files ? { files: o.files } : {}),
    ...(o.blocks ? { blocks: o.blocks } : {}),
    ...(o.attachments ? { attachments: o.attachments } : {}),
  };
  const channelType = o.channelType ?? (o.channel.startsWith('D') ? 'im' : 'channel');
  const result = {
    ts,
    message: { type: 'message', ...common, channel_type: channelType, ...(o.subtype ? { subtype: o.subtype } : {}) } as Json,
    mention: { type: 'app_mention', ...common } as Json,
  };
  // Slack sends no app_mention for a message in a DM with the app: only `message.im`.
  if (channelType === 'im') {
    Object.defineProperty(result, 'mention', {
      enumerable: false,
      get() {
        throw new Error('Slack sends no app_mention event for a DM (channel_type im): deliver the message event only');
      },
    });
  }
  return result;
}

/** The Events API envelope around one event. */
export function eventEnvelope(state: SlackState, event: Json, eventId = state.nextId('Ev'), team?: EventTeam): Json {
  const teamId = team?.teamId ?? state.identity.teamId;
  const enterpriseId = team?.enterpriseId ?? null;
  return {
    token: 'legacy-verification-token',
    team_id: teamId,
    ...(enterpriseId ? { enterprise_id: enterpriseId } : {}),
    api_app_id: state.identity.appId,
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [
      { enterprise_id: enterpriseId, team_id: team?.isEnterpriseInstall ? null : teamId, user_id: state.identity.botUserId, is_bot: true, is_enterprise_install: team?.isEnterpriseInstall === true },
    ],
    is_ext_shared_channel: false,
  };
}

/** A trigger_id valid for one views.open within 3 seconds. */
export function issueTrigger(state: SlackState): string {
  const id = `${Date.now()}.${state.nextId('')}.trig`;
  state.triggers.set(id, { issuedAt: Date.now(), used: false });
  return id;
}

export interface SlashCommandOptions {
  text: string;
  user: string;
  channel: string;
  /** `directmessage` for a DM; defaults to `general`. */
  channelName?: string;
  command?: string;
  userName?: string;
  /** The workspace it is run in (multi-workspace tests). @defaultValue the emulator's team */
  team?: string;
  /** Enterprise Grid: the organisation of that workspace (`enterprise_id`). */
  enterprise?: string;
}

/** A slash command's fields, with a fresh trigger_id and response_url. */
export function slashCommand(state: SlackState, baseUrl: string, o: SlashCommandOptions): Record<string, string> {
  const responseId = state.nextId('R');
  state.responseUrls.set(responseId, { uses: 0 });
  return {
    token: 'legacy-verification-token',
    team_id: o.team ?? state.identity.teamId,
    team_domain: 'emulated',
    channel_id: o.channel,
    channel_name: o.channelName ?? (o.channel.startsWith('D') ? 'directmessage' : 'general'),
    user_id: o.user,
    user_name: o.userName ?? o.user.toLowerCase(),
    command: o.command ?? '/agent',
    // Slack escapes &, < and > in the text, as in every text it sends (should_escape: false
    // only leaves @names and #channels unconverted).
    text: o.text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'),
    api_app_id: state.identity.appId,
    is_enterprise_install: 'false',
    ...(o.enterprise ? { enterprise_id: o.enterprise, enterprise_name: o.enterprise } : {}),
    response_url: `${baseUrl}/respond/${responseId}`,
    trigger_id: issueTrigger(state),
  };
}

/** The view_submission for a modal the bot opened, with the user's input (in `team`, default the emulator's). */
export function viewSubmission(state: SlackState, viewId: string, user: string, values: Record<string, Record<string, string>>, team = state.identity.teamId): Json {
  const view = state.views.get(viewId);
  if (!view) throw new Error(`no view ${viewId} was opened`);
  const stateValues = Object.fromEntries(
    Object.entries(values).map(([block, actions]) => [
      block,
      Object.fromEntries(Object.entries(actions).map(([action, value]) => [action, { type: 'plain_text_input', value }])),
    ]),
  );
  return {
    type: 'view_submission',
    team: { id: team, domain: 'emulated' },
    user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: team },
    api_app_id: state.identity.appId,
    token: 'legacy-verification-token',
    trigger_id: issueTrigger(state),
    view: { ...view, state: { values: stateValues } },
    response_urls: [],
    is_enterprise_install: false,
  };
}

/**
 * Its author edits a stored message: its text (and blocks: Slack rebuilds them from the edit,
 * none kept from before) change, and this is the `message_changed` event Slack sends: hidden,
 * the message as it is now (with `edited`) and as it was, its `ts` the original one.
 */
export function editedMessage(state: SlackState, channel: string, ts: string, text: string, blocks?: unknown[]): Json {
  const m = state.findMessage(channel, ts);
  if (!m) throw new Error(`message_changed: no message ${ts} in ${channel} (Slack edits only a message that exists)`);
  if (!m.user) throw new Error('message_changed: only a person edits their message here');
  const shown = (s: typeof m): Json => ({
    type: 'message',
    user: s.user,
    text: s.text,
    ts: s.ts,
    team: state.identity.teamId,
    ...(s.thread_ts ? { thread_ts: s.thread_ts } : {}),
    ...(s.blocks ? { blocks: s.blocks } : {}),
    ...(s.files ? { files: s.files } : {}),
  });
  const before = shown(m);
  const now = state.nextTs();
  m.text = text;
  if (blocks) m.blocks = blocks;
  else delete m.blocks;
  return {
    type: 'message',
    subtype: 'message_changed',
    hidden: true,
    channel,
    channel_type: channel.startsWith('D') ? 'im' : 'channel',
    ts: now,
    event_ts: now,
    message: { ...shown(m), edited: { user: m.user, ts: now } },
    previous_message: before,
  };
}
