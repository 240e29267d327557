import { SocketModeServer } from './socket-mode.js';
import { MANIFEST_SCOPES, SlackState, type EmulatedChannel, type EmulatedUser, type EmulatorIdentity } from './state.js';
import { OAuthServer, type OAuthApp } from './oauth.js';
import { archiveChannel, deleteChannel, inviteBot, removeBot, unarchiveChannel } from './channel-life.js';
import { editedMessage, eventEnvelope, slashCommand, userMessage, viewSubmission, type EventTeam, type Json, type SlashCommandOptions, type UserMessageOptions } from './payloads.js';
import { formBody, interactionBody, sendSigned, type SignatureMode } from './sender.js';
import { startWebApi } from './web-api.js';
import { assistantContextChanged, assistantMessage, assistantMethods, assistantThreadStarted, feedbackClick, globalShortcut, messageShortcut, shownAssistantStatus } from './assistant.js';
import { startFileHost } from './files.js';

export { SlackState, findPings, MANIFEST_SCOPES, type RecordedCall, type EmulatedUser, type HeldCall, type MessageMetadata } from './state.js';
export { slackSignature, sendSigned, type SignatureMode } from './sender.js';

/** One delivery to the app and how it answered. */
export interface Delivery {
  acked: boolean;
  /** HTTP status (HTTP mode). */
  status?: number;
  /** The ack's body: HTTP response or Socket Mode ack payload. */
  body?: Record<string, unknown> | string;
  ms: number;
}

export interface EventOptions {
  /** Sent as X-Slack-Retry-Num (HTTP) or retry_attempt (Socket Mode). */
  retryNum?: number;
  retryReason?: string;
  /** Reuse an event_id (a redelivery carries the same one). */
  eventId?: string;
  signature?: SignatureMode;
  /** Socket Mode: which open connection carries it, oldest first (default: the newest). */
  connection?: number;
  /** "Add to Slack": which installation the event is for. @defaultValue the emulator's own team */
  team?: EventTeam;
}

/** How Slack reaches the app: signed HTTP requests, or envelopes over Socket Mode. */
export interface SlackTransport {
  readonly kind: 'http' | 'socket';
  event(event: Json, options?: EventOptions): Promise<Delivery>;
  /** `responseUrlId` matches the `response` of the recorded `response_url` calls. */
  command(options: SlashCommandOptions, signature?: SignatureMode): Promise<Delivery & { responseUrlId: string; triggerId: string }>;
  interaction(payload: Json, signature?: SignatureMode): Promise<Delivery>;
}

export interface SlackEmulatorOptions extends Partial<EmulatorIdentity> {
  users?: EmulatedUser[];
  channels?: EmulatedChannel[];
  /** Turns on "Add to Slack": oauth.v2.access for this client, tokens per installed workspace. */
  oauth?: OAuthApp;
  /** How long an assistant thread's status stays up while nothing is posted. @defaultValue 120_000 (Slack's two minutes) */
  assistantStatusExpiryMs?: number;
}

export type SlackEmulator = Awaited<ReturnType<typeof startSlackEmulator>>;

function ids(fields: Record<string, string>) {
  return { responseUrlId: fields.response_url!.split('/').at(-1)!, triggerId: fields.trigger_id! };
}

/** Starts the Web API, response URLs and Socket Mode on one 127.0.0.1 port. */
export async function startSlackEmulator(options: SlackEmulatorOptions = {}) {
  const state = new SlackState({
    teamId: options.teamId ?? 'T0EMU',
    botUserId: options.botUserId ?? 'UBOT0001',
    botId: options.botId ?? 'BBOT0001',
    appId: options.appId ?? 'A0EMU0001',
    botToken: options.botToken ?? 'xoxb-emulated-bot-token',
    appToken: options.appToken ?? 'xapp-1-emulated-app-token',
    signingSecret: options.signingSecret ?? 'emulated-signing-secret',
    scopes: options.scopes ?? MANIFEST_SCOPES,
  });
  for (const u of options.users ?? []) state.users.set(u.id, u);
  for (const c of options.channels ?? []) state.channels.set(c.id, c);
  if (options.oauth) state.oauth = new OAuthServer(state, options.oauth);
  if (options.assistantStatusExpiryMs !== undefined) state.assistantStatusExpiryMs = options.assistantStatusExpiryMs;

  const holder: { socket?: SocketModeServer } = {};
  const web = await startWebApi(state, { ...assistantMethods(state), 'apps.connections.open': () => holder.socket!.open() });
  const fileHost = await startFileHost(state);
  const socketMode = new SocketModeServer(web.server, state, web.baseUrl);
  holder.socket = socketMode;
  const id = state.identity;

  const http = (url: string): SlackTransport => ({
    kind: 'http',
    async event(event, o = {}) {
      const headers: Record<string, string> = o.retryNum ? { 'x-slack-retry-num': String(o.retryNum), 'x-slack-retry-reason': o.retryReason ?? 'http_timeout' } : {};
      const body = JSON.stringify(eventEnvelope(state, event, o.eventId, o.team));
      const r = await sendSigned(url, id.signingSecret, body, 'application/json', o.signature, headers);
      return { acked: r.status === 200, status: r.status, body: r.body, ms: r.ms };
    },
    async command(o, signature) {
      const fields = slashCommand(state, web.baseUrl, o);
      const r = await sendSigned(url, id.signingSecret, formBody(fields), 'application/x-www-form-urlencoded', signature);
      return { acked: r.status === 200, status: r.status, body: r.body, ms: r.ms, ...ids(fields) };
    },
    async interaction(payload, signature) {
      const r = await sendSigned(url, id.signingSecret, interactionBody(payload), 'application/x-www-form-urlencoded', signature);
      return { acked: r.status === 200, status: r.status, body: r.body, ms: r.ms };
    },
  });

  const socketTransport: SlackTransport = {
    kind: 'socket',
    async event(event, o = {}) {
      const r = await socketMode.send('events_api', eventEnvelope(state, event, o.eventId, o.team), {
        retryAttempt: o.retryNum,
        retryReason: o.retryReason,
        ...(o.connection !== undefined ? { connection: o.connection } : {}),
      });
      return { acked: r.acked, body: r.payload, ms: r.ms };
    },
    async command(o) {
      const fields = slashCommand(state, web.baseUrl, o);
      const r = await socketMode.send('slash_commands', fields);
      return { acked: r.acked, body: r.payload, ms: r.ms, ...ids(fields) };
    },
    async interaction(payload) {
      const r = await socketMode.send('interactive', payload);
      return { acked: r.acked, body: r.payload, ms: r.ms };
    },
  };

  return {
    state,
    identity: id,
    apiUrl: web.apiUrl,
    baseUrl: web.baseUrl,
    socket: socketMode,
    /** "Add to Slack" (when started with `oauth`): the consent step and the installed workspaces. */
    oauth: state.oauth,
    calls: state.calls,
    http,
    socketTransport,
    addUser: (u: EmulatedUser) => void state.users.set(u.id, u),
    addChannel: (c: EmulatedChannel) => void state.channels.set(c.id, c),
    /** A channel's life (channel-life.ts): each changes what Slack answers and returns the events Slack sends for it. */
    archiveChannel: (channel: string, by: string) => archiveChannel(state, channel, by),
    unarchiveChannel: (channel: string, by: string) => unarchiveChannel(state, channel, by),
    deleteChannel: (channel: string, by: string) => deleteChannel(state, channel, by),
    removeBot: (channel: string, by: string) => removeBot(state, channel, by),
    inviteBot: (channel: string, by: string) => inviteBot(state, channel, by),
    fail: state.fail.bind(state),
    /** Slack's non-Marketplace limits on history/replies (pages of `pageSize`, one call per window each); undefined lifts them. */
    limitReads: (o: { windowMs: number; pageSize?: number } | undefined) => {
      state.readLimits = o ? { windowMs: o.windowMs, pageSize: o.pageSize ?? 15, lastCall: new Map() } : undefined;
    },
    /** Slack's chat.postMessage limit per channel (one post each `perChannelMs`, bursts of `burst`); undefined lifts it. */
    limitPosts: (o: { perChannelMs: number; burst?: number } | undefined) => {
      state.postLimits = o ? { perChannelMs: o.perChannelMs, burst: o.burst ?? 3, buckets: new Map() } : undefined;
    },
    hold: state.hold.bind(state),
    /** Delays the calls `ms` picks (milliseconds before the method runs); undefined removes it. */
    setLatency: (ms: ((method: string, params: Record<string, string>) => number) | undefined) => {
      state.latency = ms;
    },
    waitForHeld: state.waitForHeld.bind(state),
    releaseHeld: state.releaseAll.bind(state),
    /** The messages of a thread (parent first) as stored, metadata included. */
    thread: (channel: string, ts: string) => state.messages.filter((m) => m.channel === channel && (m.ts === ts || m.thread_ts === ts)),
    waitForCall: state.waitForCall.bind(state),
    waitForCalls: state.waitForCalls.bind(state),
    callsOf: state.callsOf.bind(state),
    posted: state.posted.bind(state),
    userMessage: (o: UserMessageOptions) => userMessage(state, o),
    /** Someone deletes a message: it leaves the history, and this is the `message_deleted` event Slack sends. */
    deleteMessage(channel: string, ts: string) {
      const gone = state.removeMessage(channel, ts);
      const previous = gone ? { type: 'message', text: gone.text, ts, ...(gone.user ? { user: gone.user } : {}), ...(gone.bot_id ? { bot_id: gone.bot_id } : {}), ...(gone.thread_ts ? { thread_ts: gone.thread_ts } : {}) } : undefined;
      const now = state.nextTs();
      return { type: 'message', subtype: 'message_deleted', hidden: true, channel, ts: now, event_ts: now, deleted_ts: ts, channel_type: channel.startsWith('D') ? 'im' : 'channel', ...(previous ? { previous_message: previous } : {}) };
    },
    /** Its author edits a message: the `message_changed` event Slack sends (payloads.ts editedMessage). */
    editMessage: (channel: string, ts: string, text: string, blocks?: unknown[]) => editedMessage(state, channel, ts, text, blocks),
    viewSubmission: (viewId: string, user: string, values: Record<string, Record<string, string>>, team?: string) => viewSubmission(state, viewId, user, values, team),
    /** Slack's file host: `files.add(...)` gives a `files[]` entry; `files.downloads` records each GET. */
    files: fileHost,
    assistantThreadStarted: (o: Parameters<typeof assistantThreadStarted>[1]) => assistantThreadStarted(state, o),
    assistantContextChanged: (o: Parameters<typeof assistantContextChanged>[1]) => assistantContextChanged(state, o),
    assistantMessage: (o: Parameters<typeof assistantMessage>[1]) => assistantMessage(state, o),
    /** What an assistant thread's status line shows now ('' when none, cleared by a post, or expired). */
    assistantStatus: (channel: string, threadTs: string) => shownAssistantStatus(state, channel, threadTs),
    feedbackClick: (o: Parameters<typeof feedbackClick>[1]) => feedbackClick(state, o),
    /** A message shortcut; its response_url is a fresh one of this emulator. */
    messageShortcut(o: Omit<Parameters<typeof messageShortcut>[1], 'responseUrl'>) {
      const id = state.nextId('R');
      state.responseUrls.set(id, { uses: 0 });
      return messageShortcut(state, { ...o, responseUrl: `${web.baseUrl}/respond/${id}` });
    },
    /** A global shortcut (no message, no response_url): its trigger_id opens one view within 3 s. */
    globalShortcut: (o: Parameters<typeof globalShortcut>[1]) => globalShortcut(state, o),
    /** Reactions the bot currently has on a message. */
    reactionsOn(channel: string, ts: string): string[] {
      const m = state.findMessage(channel, ts);
      return m ? [...m.reactions.keys()].filter((name) => m.reactions.get(name)?.has(id.botUserId)) : [];
    },
    async close() {
      // A held answer is never sent: its client is meant to be gone (or to time out).
      state.heldCalls.splice(0);
      await socketMode.close();
      await web.close();
      await fileHost.close();
    },
  };
}
