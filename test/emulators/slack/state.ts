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
  /** Mention/broadcast sequences that would ping someone (`<!channel>`, `<@U1>`, ...). */
  pings: string[];
  at: number;
}

export interface EmulatedUser {
  id: string;
  name: string;
  isAdmin?: boolean;
  isOwner?: boolean;
  isBot?: boolean;
}

export interface EmulatedChannel {
  id: string;
  /** false → chat.postMessage fails with not_in_channel. @defaultValue true */
  member?: boolean;
  archived?: boolean;
}

export interface StoredMessage {
  ts: string;
  channel: string;
  text: string;
  user?: string;
  bot_id?: string;
  thread_ts?: string;
  reactions: Map<string, Set<string>>;
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
}

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
  readonly messages: StoredMessage[] = [];
  readonly faults = new Map<string, Fault[]>();
  readonly triggers = new Map<string, { issuedAt: number; used: boolean }>();
  readonly views = new Map<string, Record<string, unknown>>();
  readonly responseUrls = new Map<string, { uses: number }>();
  private tsCounter = 0;
  private idCounter = 0;

  constructor(readonly identity: EmulatorIdentity) {
    super();
    this.setMaxListeners(100);
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
