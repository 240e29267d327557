import type { OAuthServer } from './oauth.js';
import { readSlackManifest, yamlListItems } from '../../support/slack-manifest.js';
import { EventEmitter } from 'node:events';

/** One Web API call (or response_url post) as the emulator received it. */
export interface RecordedCall {
  method: string;
  /** Parsed arguments: form fields or JSON body. `blocks`/`view` stay as the JSON strings sent. */
  params: Record<string, string>;
  /** The request body exactly as received. */
  rawBody: string;
  /** The Authorization header, if any. */
  authorization?: string;
  status: number;
  response: Record<string, unknown>;
  /** True while (or when) the emulator held this call's answer back (see `SlackState.hold`). */
  held?: boolean;
  /** Mention/broadcast sequences that would ping someone (`<!channel>`, `<@U1>`, ...). */
  pings: string[];
  /** With "Add to Slack": the workspace (or org) whose installed bot token made the call. */
  team?: string;
  at: number;
}

export interface EmulatedUser {
  id: string;
  name: string;
  isAdmin?: boolean;
  isOwner?: boolean;
  isBot?: boolean;
  /** The user's own workspace (`team_id`): another one for a Slack Connect member. @defaultValue the emulator's team */
  teamId?: string;
  /** Enterprise Grid: `enterprise_user.enterprise_id`. */
  enterpriseId?: string;
  /** Deactivated: `deleted: true` (Slack keeps the role flags). */
  deleted?: boolean;
  /** A guest: `is_restricted` (multi-channel) or, with `single`, `is_ultra_restricted` too. */
  guest?: 'multi' | 'single';
}

export interface EmulatedChannel {
  id: string;
  /**
   * Whether the bot is in it. false → posting fails with `not_in_channel`; for a private channel
   * or a DM (`D…`, then one between other people) the bot cannot even see it, so posting and
   * `conversations.info` fail with `channel_not_found`, as on Slack. @defaultValue true
   */
  member?: boolean;
  /** A private channel (`conversations.info` `is_private`). @defaultValue false, true for `G…` */
  private?: boolean;
  /** Archived: posting and reacting fail with `is_archived`; it can still be read. */
  archived?: boolean;
  /** Deleted: every method answers `channel_not_found`, member or not. */
  deleted?: boolean;
  /**
   * For the bot's own DM (`D…`): the person it is with (`conversations.info` `user`).
   * @defaultValue the first person who wrote in it
   */
  user?: string;
}

export interface StoredMessage {
  ts: string;
  channel: string;
  text: string;
  user?: string;
  bot_id?: string;
  /** Slack's message subtype, when it has one (an assistant thread's root: `assistant_app_thread`). */
  subtype?: string;
  thread_ts?: string;
  /** Blocks, legacy attachments and files as posted: Slack returns them as they are. */
  blocks?: unknown[];
  attachments?: unknown[];
  files?: unknown[];
  /** Message metadata an app attached (`chat.postMessage` `metadata`); apps only, never users. */
  metadata?: MessageMetadata;
  reactions: Map<string, Set<string>>;
}

/** Slack message metadata: what `chat.postMessage` takes and `include_all_metadata` returns. */
export interface MessageMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/**
 * A call whose answer the emulator holds back after doing its work (the message is stored,
 * the HTTP answer not sent): the window where a client that dies cannot know it succeeded.
 */
export interface HeldCall {
  call: RecordedCall;
  /** Sends the held answer now (no-op when the client is gone). */
  release(): void;
}

/** Which calls to hold, and how many. */
export interface Hold {
  method: string;
  filter: (params: Record<string, string>) => boolean;
  times: number;
}

/** A fault served instead of the real answer for the next `times` calls of a method. */
export interface Fault {
  /** `ratelimited` → HTTP 429 with Retry-After; `http_500` etc. → that HTTP status; anything else → `{ ok: false, error }`. */
  error: string;
  retryAfterSeconds?: number;
  times: number;
}

export interface EmulatorIdentity {
  teamId: string;
  botUserId: string;
  botId: string;
  appId: string;
  botToken: string;
  appToken: string;
  signingSecret: string;
  /**
   * The bot token's scopes: a method whose scope is missing answers `missing_scope` with
   * `needed` and `provided`, as Slack does. @defaultValue every scope the manifests ask for
   */
  scopes: readonly string[];
}

/**
 * The bot scopes adapters/slack/manifest.http.yaml asks for: what an installed bridge has. Read
 * from the manifest itself, so a scope added there is granted here and one removed is missing.
 */
export const MANIFEST_SCOPES: readonly string[] = yamlListItems(readSlackManifest('manifest.http.yaml'), 'bot');

const PING = /<(?:!channel|!here|!everyone|!subteam\^[^>]*|@[UW][A-Z0-9]*)(?:\|[^>]*)?>/g;

/** Every sequence in a text that would notify people. */
export function findPings(text: string): string[] {
  return text.match(PING) ?? [];
}

/** Shared state of one emulator: workspace contents, faults, and the call log with waiters. */
export class SlackState extends EventEmitter {
  readonly calls: RecordedCall[] = [];
  readonly users = new Map<string, EmulatedUser>();
  readonly channels = new Map<string, EmulatedChannel>();
  /** Every message, oldest first; add with `addMessage`, which also indexes it. */
  readonly messages: StoredMessage[] = [];
  /** The messages by channel and ts: reactions and metadata look one up per call. */
  private readonly messageIndex = new Map<string, StoredMessage>();
  readonly faults = new Map<string, Fault[]>();
  readonly triggers = new Map<string, { issuedAt: number; used: boolean }>();
  readonly views = new Map<string, Record<string, unknown>>();
  readonly responseUrls = new Map<string, { uses: number }>();
  readonly holds: Hold[] = [];
  /** Every uploaded file's full object by ID, as `files.info` answers it. */
  readonly fileInfos = new Map<string, Record<string, unknown>>();
  /**
   * Slack's limits for apps distributed outside the Marketplace (since May 2025):
   * `conversations.history` and `.replies` at most 15 messages a page and one call per window
   * each (a minute at Slack), else 429 with Retry-After. Off unless a test sets it.
   */
  readLimits: { windowMs: number; pageSize: number; lastCall: Map<string, number> } | undefined;
  /**
   * Slack's special limit on chat.postMessage: about one message a second per channel, with a
   * short burst allowed (a bucket of `burst` posts, one more each `perChannelMs`), else 429 with
   * Retry-After. Off unless a test sets it.
   */
  postLimits: { perChannelMs: number; burst: number; buckets: Map<string, { tokens: number; at: number }> } | undefined;
  /** Answers held back right now, oldest first. */
  readonly heldCalls: HeldCall[] = [];
  /** "Add to Slack" (set when the emulator is started with `oauth`). */
  oauth?: OAuthServer;
  /** Assistant threads' status lines as last set, by `channel thread_ts`; the bot's post in the thread clears one. */
  readonly assistantStatuses = new Map<string, { status: string; setAt: number }>();
  /** How long Slack shows a status while nothing is posted: two minutes (docs of assistant.threads.setStatus). */
  assistantStatusExpiryMs = 120_000;
  /** How long a call waits before Slack runs it (real Slack is not 1 ms away); none when unset. */
  latency: ((method: string, params: Record<string, string>) => number) | undefined;
  private tsCounter = 0;
  private idCounter = 0;

  constructor(readonly identity: EmulatorIdentity) {
    super();
    this.setMaxListeners(100);
  }

  addMessage(message: StoredMessage): void {
    this.messages.push(message);
    this.messageIndex.set(`${message.channel} ${message.ts}`, message);
  }

  /** Deletes a message (someone deleted it): gone from history, reactions on it refused. */
  removeMessage(channel: string, ts: string): StoredMessage | undefined {
    const i = this.messages.findIndex((m) => m.channel === channel && m.ts === ts);
    if (i < 0) return undefined;
    this.messageIndex.delete(`${channel} ${ts}`);
    return this.messages.splice(i, 1)[0];
  }

  findMessage(channel: string, ts: string): StoredMessage | undefined {
    return this.messageIndex.get(`${channel} ${ts}`);
  }

  nextTs(): string {
    this.tsCounter += 1;
    return `${Math.floor(Date.now() / 1000)}.${String(this.tsCounter).padStart(6, '0')}`;
  }

  nextId(prefix: string): string {
    this.idCounter += 1;
    return `${prefix}${Date.now().toString(36).toUpperCase()}${this.idCounter}`;
  }

  record(call: RecordedCall): void {
    this.calls.push(call);
    this.emit('call', call);
  }

  /** Queues a fault for the next `times` calls of `method`. */
  fail(method: string, fault: Omit<Fault, 'times'> & { times?: number }): void {
    const list = this.faults.get(method) ?? [];
    list.push({ times: 1, ...fault });
    this.faults.set(method, list);
  }

  takeFault(method: string): Fault | undefined {
    const list = this.faults.get(method);
    const fault = list?.[0];
    if (!fault) return undefined;
    fault.times -= 1;
    if (fault.times <= 0) list!.shift();
    return { ...fault };
  }

  /**
   * Holds the answer of the next `times` calls of `method` (matching `filter`): the method runs
   * (a post is stored) but its HTTP answer waits until released, or forever. A test kills the
   * client in that window. `waitForHeld` says when a call is being held.
   */
  hold(method: string, options: { filter?: (params: Record<string, string>) => boolean; times?: number } = {}): void {
    this.holds.push({ method, filter: options.filter ?? (() => true), times: options.times ?? 1 });
  }

  /** Whether this call's answer is to be held (takes one from its hold). */
  takeHold(method: string, params: Record<string, string>): boolean {
    const i = this.holds.findIndex((h) => h.method === method && h.filter(params));
    if (i < 0) return false;
    const h = this.holds[i]!;
    h.times -= 1;
    if (h.times <= 0) this.holds.splice(i, 1);
    return true;
  }

  /** Registers a held answer and announces it (`held` event). */
  addHeld(held: HeldCall): void {
    this.heldCalls.push(held);
    this.emit('held', held);
  }

  /** Sends every held answer. */
  releaseAll(): void {
    for (const h of this.heldCalls.splice(0)) h.release();
  }

  /** Resolves with the first call of `method` whose answer is held (one already held counts). */
  waitForHeld(method: string, timeoutMs = 10_000): Promise<HeldCall> {
    const already = this.heldCalls.find((h) => h.call.method === method);
    if (already) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const onHeld = (h: HeldCall) => {
        if (h.call.method !== method) return;
        clearTimeout(timer);
        this.off('held', onHeld);
        resolve(h);
      };
      const timer = setTimeout(() => {
        this.off('held', onHeld);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for a held ${method}`));
      }, timeoutMs);
      this.on('held', onHeld);
    });
  }

  /** Calls of one method (all outcomes), optionally filtered. */
  callsOf(method: string, filter?: (c: RecordedCall) => boolean): RecordedCall[] {
    return this.calls.filter((c) => c.method === method && (!filter || filter(c)));
  }

  /**
   * Resolves once `count` calls match (counting those already made), rejects after `timeoutMs`.
   * Tests await outcomes with this instead of sleeping.
   */
  waitForCalls(method: string, filter: (c: RecordedCall) => boolean = () => true, count = 1, timeoutMs = 10_000): Promise<RecordedCall[]> {
    const matching = () => this.callsOf(method, filter);
    if (matching().length >= count) return Promise.resolve(matching());
    return new Promise((resolve, reject) => {
      const onCall = () => {
        if (matching().length >= count) {
          cleanup();
          resolve(matching());
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${count} × ${method} (saw ${matching().length}; all calls: ${this.calls.map((c) => c.method).join(', ')})`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.off('call', onCall);
      };
      this.on('call', onCall);
    });
  }

  async waitForCall(method: string, filter?: (c: RecordedCall) => boolean, timeoutMs?: number): Promise<RecordedCall> {
    const calls = await this.waitForCalls(method, filter, 1, timeoutMs);
    return calls.find((c) => !filter || filter(c))!;
  }

  /** Successful chat.postMessage calls, the bot's posted messages. */
  posted(filter?: (c: RecordedCall) => boolean): RecordedCall[] {
    return this.callsOf('chat.postMessage', (c) => c.response.ok === true && (!filter || filter(c)));
  }
}
