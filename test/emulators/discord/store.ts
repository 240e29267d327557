/**
 * State of the emulated Discord: messages per channel, interactions and their answers,
 * registered commands, REST calls, and faults queued for the next message creates.
 */
import type { Json } from './payloads.js';

/** One REST request as the emulator saw it, for assertions (body and headers kept verbatim). */
export interface RestCall {
  method: string;
  /** Decoded path below `/api/v10`, e.g. `/channels/123/messages`. */
  path: string;
  rawPath: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json: Json | undefined;
  status: number;
  at: number;
}

export interface InteractionResponse {
  kind: 'callback' | 'edit-original' | 'followup';
  /** Callback type (4 reply, 5 deferred, 8 autocomplete result, 9 modal) for `callback`. */
  type?: number;
  data: Json;
}

/** An interaction sent over the gateway and everything the bot answered to it. */
export interface EmuInteraction {
  id: string;
  token: string;
  payload: Json;
  responses: InteractionResponse[];
  /** Content of the original response after edits (undefined until there is one). */
  original?: { content: string; flags: number };
  followups: Array<{ content: string; flags: number }>;
  /** When Discord sent it (its 3-second and 15-minute windows count from here). */
  createdAt: number;
  /** Answers refused as too late: a callback after 3 s (10062), an edit or follow-up after 15 minutes (50027). */
  late: Array<{ kind: 'callback' | 'webhook'; type?: number }>;
}

/**
 * A 429 with Discord's JSON and rate-limit headers, a 5xx, or (`edge`) a 429 from in front of
 * Discord (Cloudflare, a proxy): an HTML body and no `Retry-After` nor `X-RateLimit-*` header.
 */
export type Fault = { status: 429; retryAfterSeconds: number; global?: boolean } | { status: 429; edge: true } | { status: 500 | 502 | 503 };

export class Store {
  readonly calls: RestCall[] = [];
  readonly messages = new Map<string, Json[]>();
  readonly interactions = new Map<string, EmuInteraction>();
  readonly commands = new Map<string, Json[]>();
  readonly messageCreateFaults: Fault[] = [];
  /** Faults for the next command bulk overwrites (`PUT …/commands`). */
  readonly commandPutFaults: Fault[] = [];
  /** Channels where the bot lacks access (POST answers 403, code 50001). */
  readonly noAccess = new Set<string>();
  /** Channels and threads deleted (`deleteChannel`): every request there answers 404, code 10003. */
  readonly deletedChannels = new Set<string>();
  /** Channels where the bot may not read the history: a reply is refused (code 160002), a plain post is not. */
  readonly noReadHistory = new Set<string>();
  /** Discord's per-channel bucket for message creates, when a test turns it on (`rateLimitMessageCreates`). */
  messageCreateBucket?: { limit: number; windowMs: number; windows: Map<string, { start: number; used: number }> };
  /**
   * Message creates whose answer is held back: the message is stored (and dispatched), the HTTP
   * answer never sent, the window where a client that dies cannot know it posted. One per entry.
   */
  readonly messageCreateHolds: Array<(body: Json) => boolean> = [];
  /** Creates held so far (their stored messages). */
  readonly heldCreates: Json[] = [];
  /**
   * Requests answered never, one per entry: the first whose `METHOD /path` (under /api/v10,
   * decoded) matches, on any route. A test pushes a pattern, then kills the client while it waits.
   */
  readonly requestHolds: RegExp[] = [];
  /** Requests held so far (`METHOD /path`). */
  readonly heldRequests: string[] = [];
  /** `<channel>:<nonce>` → the message it created and when, for `enforce_nonce`. */
  readonly nonces = new Map<string, { message: Json; at: number }>();
  /** Attachment bytes by `<channel>/<attachment id>`. */
  readonly files = new Map<string, { body: Buffer; contentType: string | null }>();
  /** Every attachment download, with the Authorization header it carried (none is needed). */
  readonly fileFetches: Array<{ url: string; authorization?: string; found: boolean }> = [];

  addMessage(channelId: string, message: Json): void {
    const list = this.messages.get(channelId) ?? [];
    list.push(message);
    this.messages.set(channelId, list);
  }

  /** Whether this request (`METHOD /path`) is to be held (`requestHolds`): taken off the list if so. */
  holdRequest(request: string): boolean {
    const at = this.requestHolds.findIndex((h) => h.test(request));
    if (at < 0) return false;
    this.requestHolds.splice(at, 1);
    this.heldRequests.push(request);
    return true;
  }

  /** Deletes a message; false when there was none. */
  deleteMessage(channelId: string, messageId: string): boolean {
    const list = this.messages.get(channelId) ?? [];
    const at = list.findIndex((m) => m.id === messageId);
    if (at >= 0) list.splice(at, 1);
    return at >= 0;
  }

  findMessage(channelId: string, messageId: string): Json | undefined {
    return this.messages.get(channelId)?.find((m) => m.id === messageId);
  }

  /**
   * Messages of a channel the way Discord pages them, newest first, `before`/`after` exclusive:
   * with `after`, the `limit` messages right after it (paging forward), not the newest.
   */
  page(channelId: string, query: Record<string, string>): Json[] {
    const limit = Math.min(100, Math.max(1, Number(query.limit ?? 50) || 50));
    let list = [...(this.messages.get(channelId) ?? [])];
    if (query.before) list = list.filter((m) => BigInt(m.id) < BigInt(query.before!));
    if (query.after && !query.before) return list.filter((m) => BigInt(m.id) > BigInt(query.after!)).slice(0, limit).reverse();
    if (query.after) list = list.filter((m) => BigInt(m.id) > BigInt(query.after!));
    return list.reverse().slice(0, limit);
  }
}
