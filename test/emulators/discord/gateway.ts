/**
 * The emulator's gateway: Discord's WebSocket protocol (v10, JSON, no compression). HELLO,
 * IDENTIFY → READY + GUILD_CREATE, heartbeats, RESUME with replay of missed events, intent
 * filtering (MessageContent blanks content), close 4014 for a disallowed privileged intent.
 * Multi-shard: IDENTIFY carries `shard: [id, count]`; a guild's events go to every session whose
 * shard is `(guild_id >> 22) % count` for its own count (Discord does not check that the sessions
 * of one bot agree on the count), DMs to shard 0; each session's READY lists only its guilds.
 * Each accepted IDENTIFY uses one session start (`onIdentify`).
 *
 * Sessions live as on Discord: a shard may have several (a new process IDENTIFYing while the
 * session of the one before is still resumable), each receiving its shard's events. A session
 * whose connection dropped (no close frame, or a close code other than 1000/1001) buffers its
 * events and can be RESUMEd, from any new connection, for `resumeWindowMs`; one the client closed
 * with 1000 or 1001 is over. A RESUME of a session that is over, expired or unknown gets op 9
 * with `d: false`, so the client must IDENTIFY.
 *
 * Strict where Discord is (the rules are in gateway-rules.ts): IDENTIFY pacing per rate-limit key
 * (op 9), gateway versions (4012), payload order (4003, 4005, 4001), 120 payloads per 60 s (4008).
 * A session closed with 4007 or 4009 is over (Discord: start a new one): its RESUME gets op 9.
 */
import type { Server } from 'node:http';
import { WebSocketServer, WebSocket } from 'ws';
import { blankContent, guildCreate, userObject, type Json } from './payloads.js';
import { allGuildIds, shardOf, type World } from './world.js';
import { emptyGatewayStats, type GatewayStats } from './gateway-stats.js';
import { ENDING_CLOSES, INTENTS, IdentifyPacer, OP, PayloadRateLimit, SERVED_VERSIONS, SESSION_OVER_CLOSES, identifiedShard, outOfOrder } from './gateway-rules.js';

/** How many events a session keeps for RESUME. */
const REPLAY_BUFFER = 1000;
/**
 * `resume_gateway_url` differs from the URL `GET /gateway/bot` gives, as on Discord (another host
 * there, a path here), so that tests see which one a RESUME came on.
 */
const RESUME_PATH = '/resume';

export interface GatewayOptions {
  token: string;
  allowMessageContent: boolean;
  heartbeatIntervalMs: number;
  /** How long a session without a connection stays resumable. */
  resumeWindowMs: number;
  /** An IDENTIFY was accepted: it counts against the daily session-start limit. */
  onIdentify?: () => void;
  /** `session_start_limit.max_concurrency`: how many rate-limit keys may IDENTIFY per window. */
  maxConcurrency?: () => number;
  /** How long a rate-limit key waits between IDENTIFYs (Discord: 5 s). @defaultValue 5000 */
  identifyWindowMs?: number;
}

interface Session {
  id: string;
  /** [shard_id, shard_count] from IDENTIFY ([0, 1] when absent). */
  shard: [number, number];
  seq: number;
  intents: number;
  socket?: WebSocket;
  /** When its last connection went away (for the resume window). */
  disconnectedAt?: number;
  buffer: Array<{ s: number; t: string; d: Json }>;
}

export class Gateway {
  readonly stats: GatewayStats = emptyGatewayStats();

  private readonly wss: WebSocketServer;
  /** Sessions not over: connected, or dropped and still within the resume window. */
  private readonly sessions = new Map<string, Session>();
  private sessionCounter = 0;
  /** Zombie connections: open, but nothing is sent on them (heartbeat ACKs included). */
  private readonly silent = new WeakSet<WebSocket>();
  /** Connections opened on `resume_gateway_url`. */
  private readonly onResumeUrl = new WeakSet<WebSocket>();
  /** Connections that sent an accepted IDENTIFY or RESUME. */
  private readonly authenticated = new WeakSet<WebSocket>();
  private readonly identifyPacer: IdentifyPacer;

  constructor(
    server: Server,
    private readonly world: World,
    private readonly options: GatewayOptions,
    private readonly url: () => string,
    private readonly onChange: () => void,
  ) {
    this.identifyPacer = new IdentifyPacer(() => options.maxConcurrency?.() ?? 1, options.identifyWindowMs ?? 5_000);
    this.wss = new WebSocketServer({ server });
    this.wss.on('connection', (ws, req) => {
      const url = new URL(req.url ?? '/', 'ws://emulator');
      if (url.pathname === RESUME_PATH) this.onResumeUrl.add(ws);
      this.onConnection(ws, url.searchParams.get('v'));
    });
  }

  /**
   * Sends an event to every session whose shard owns `guildId` (shard 0 for DMs and session-less
   * events), buffered for RESUME when its socket is gone.
   */
  dispatch(
    t: string,
    d: Json,
    needs?: { intent: number; messageContent?: 'blank-unless-exempt'; exempt?: boolean },
    guildId?: string,
  ): void {
    for (const session of this.live()) if (shardOf(guildId, session.shard[1]) === session.shard[0]) this.dispatchTo(session, t, d, needs);
  }

  private dispatchTo(session: Session, t: string, d: Json, needs?: { intent: number; messageContent?: 'blank-unless-exempt'; exempt?: boolean }): void {
    if (needs && (session.intents & needs.intent) === 0) return;
    let data = d;
    if (needs?.messageContent && !needs.exempt && (session.intents & INTENTS.MessageContent) === 0) {
      data = blankContent(d);
    }
    session.seq += 1;
    const event = { s: session.seq, t, d: data };
    session.buffer.push(event);
    if (session.buffer.length > REPLAY_BUFFER) session.buffer.shift();
    const sent = this.send(session.socket, { op: OP.Dispatch, ...event });
    this.stats.dispatched.push({ t, s: event.s, session: session.id, shard: session.shard[0], sent });
    this.onChange();
  }

  /** Sessions not over, forgetting those whose resume window has passed. */
  private live(): Session[] {
    const now = Date.now();
    for (const [id, s] of this.sessions) {
      if (!s.socket && s.disconnectedAt !== undefined && now - s.disconnectedAt > this.options.resumeWindowMs) this.sessions.delete(id);
    }
    return [...this.sessions.values()];
  }

  private sessionsOf(shardId?: number): Session[] {
    const all = this.live();
    return shardId === undefined ? all : all.filter((s) => s.shard[0] === shardId);
  }

  /**
   * Cuts the connection of one shard (every shard when none is named) without a close frame,
   * as a network failure would. The session stays resumable.
   */
  drop(shardId?: number): void {
    for (const session of this.sessionsOf(shardId)) {
      const socket = session.socket;
      session.socket = undefined;
      session.disconnectedAt = Date.now();
      socket?.terminate();
    }
  }

  /**
   * Op 9. Not resumable (`d: false`): the session is gone, the client must IDENTIFY again.
   * Resumable (`d: true`): the client should RESUME it; events until then are kept for the replay.
   */
  invalidateSession(shardId?: number, resumable = false): void {
    for (const session of this.sessionsOf(shardId)) {
      const socket = session.socket;
      if (resumable) {
        session.socket = undefined;
        session.disconnectedAt = Date.now();
      } else this.sessions.delete(session.id);
      this.send(socket, { op: OP.InvalidSession, d: resumable, s: null, t: null });
    }
  }

  /** RESUMEs still to be answered with op 7 or op 9 (`d: true`) instead of the replay (see {@link interruptNextResumes}). */
  private interruptedResumes: { count: number; answer: 'reconnect' | 'invalid-resumable' } = { count: 0, answer: 'reconnect' };

  /**
   * The next `count` RESUMEs get no replay. `reconnect`: taken, then op 7, as when the gateway node
   * restarts just then (the session stays resumable unless the client closes with 1000/1001).
   * `invalid-resumable`: op 9 with `d: true`, "the session may be resumable" later. Either way its
   * events wait for the next RESUME.
   */
  interruptNextResumes(count: number, answer: 'reconnect' | 'invalid-resumable' = 'reconnect'): void {
    this.interruptedResumes = { count, answer };
  }

  /** Op 7: Discord asks the client to reconnect and RESUME (a gateway restart). */
  requestReconnect(shardId?: number): void {
    for (const session of this.sessionsOf(shardId)) this.send(session.socket, { op: OP.Reconnect, d: null, s: null, t: null });
  }

  /**
   * The connection goes silent without closing (a zombie: a dead route, a stuck proxy): no
   * heartbeat ACK and no event reaches the client any more; events are kept for a RESUME.
   */
  zombify(shardId?: number): void {
    for (const session of this.sessionsOf(shardId)) {
      if (!session.socket) continue;
      this.silent.add(session.socket);
      session.socket = undefined;
      session.disconnectedAt = Date.now();
    }
  }

  /** Closes the shard's connections with `code` (4000 unknown error, 4008 rate limited, …), as Discord does. */
  closeWithCode(code: number, shardId?: number): void {
    for (const session of this.sessionsOf(shardId)) {
      if (!session.socket) continue;
      this.closeWith(session.socket, code, `closed by the emulator (${code})`);
      // 4007 and 4009: "reconnect and start a new session" — this one can no longer be resumed.
      if (SESSION_OVER_CLOSES.has(code)) this.sessions.delete(session.id);
    }
  }

  /** The token IDENTIFY and RESUME must carry from now on (a token reset in the portal). */
  setToken(token: string): void {
    this.options.token = token;
  }

  /** Grants or withdraws the Message Content intent for the next IDENTIFY. */
  setAllowMessageContent(allow: boolean): void {
    this.options.allowMessageContent = allow;
  }

  /** Whether the application has the Message Content intent (REST reads blank content without it). */
  get messageContentAllowed(): boolean {
    return this.options.allowMessageContent;
  }

  /** True when at least one shard is connected and every shard with a session has an open socket. */
  get connected(): boolean {
    const shards = new Set(this.live().map((s) => s.shard[0]));
    return shards.size > 0 && this.connectedShards.length === shards.size;
  }

  /** Shard IDs with a session on an open socket. */
  get connectedShards(): number[] {
    const open = this.live().filter((s) => s.socket?.readyState === WebSocket.OPEN);
    return [...new Set(open.map((s) => s.shard[0]))].sort((a, b) => a - b);
  }

  /** Sessions of a shard that are not over (connected, or resumable), for tests. */
  sessionIds(shardId: number): string[] {
    return this.sessionsOf(shardId).map((s) => s.id);
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  /** RESUMEs still to come whose link is slow, and the slow links' frames not delivered yet ({@link slowNextResume}). */
  private slowResumes = 0;
  private readonly slowLinks = new Map<WebSocket, string[]>();

  /**
   * Test-only: the next RESUME is taken as usual, but what its connection is sent (the replay,
   * RESUMED, what follows) waits for {@link deliverSlowLinks}, as over a slow link to a far node.
   */
  slowNextResume(): void {
    this.slowResumes += 1;
  }

  /** What the slow links were sent so far arrives, in order; from now on they are fast. */
  deliverSlowLinks(): void {
    for (const [ws, frames] of this.slowLinks) for (const frame of frames) if (ws.readyState === WebSocket.OPEN) ws.send(frame);
    this.slowLinks.clear();
  }

  private send(ws: WebSocket | undefined, payload: Json): boolean {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    const slow = this.slowLinks.get(ws);
    if (slow) return slow.push(JSON.stringify(payload)) > 0;
    ws.send(JSON.stringify(payload));
    return true;
  }

  private closeWith(ws: WebSocket, code: number, reason: string): void {
    this.stats.closes.push(code);
    ws.close(code, reason);
    this.onChange();
  }

  /** While set, every new connection is cut at once (the gateway unreachable from the client). */
  refuseConnections = false;

  private onConnection(ws: WebSocket, version: string | null): void {
    this.stats.connections += 1;
    if (this.refuseConnections) return void ws.terminate();
    this.send(ws, { op: OP.Hello, d: { heartbeat_interval: this.options.heartbeatIntervalMs }, s: null, t: null });
    if (version !== null && !SERVED_VERSIONS.has(version)) return this.closeWith(ws, 4012, 'Invalid API version.');
    const rateLimit = new PayloadRateLimit();
    ws.on('message', (raw) => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (rateLimit.exceeded(Date.now())) return this.closeWith(ws, 4008, 'Rate limited.');
      let payload: Json;
      try {
        payload = JSON.parse(String(raw)) as Json;
      } catch {
        this.closeWith(ws, 4002, 'Error while decoding payload.');
        return;
      }
      const refused = outOfOrder(payload.op, this.authenticated.has(ws));
      if (refused) return this.closeWith(ws, refused.code, refused.reason);
      if (payload.op === OP.Heartbeat) {
        this.stats.heartbeats += 1;
        if (!this.silent.has(ws)) this.send(ws, { op: OP.HeartbeatAck, d: null, s: null, t: null });
        return;
      }
      if (payload.op === OP.Identify) this.identify(ws, payload.d ?? {});
      else if (payload.op === OP.Resume) this.resume(ws, payload.d ?? {});
    });
    ws.on('close', (code) => {
      for (const s of [...this.sessions.values()]) {
        if (s.socket !== ws) continue;
        s.socket = undefined;
        s.disconnectedAt = Date.now();
        // A normal close ends the session, as on Discord; any other leaves it resumable.
        if (ENDING_CLOSES.has(code)) this.sessions.delete(s.id);
      }
      this.onChange();
    });
  }

  private identify(ws: WebSocket, d: Json): void {
    if (d.token !== this.options.token) return this.closeWith(ws, 4004, 'Authentication failed.');
    const intents = Number(d.intents ?? 0);
    if ((intents & INTENTS.MessageContent) !== 0 && !this.options.allowMessageContent) {
      return this.closeWith(ws, 4014, 'Disallowed intent(s).');
    }
    const shard = identifiedShard(d);
    if (!shard) return this.closeWith(ws, 4010, 'Invalid shard.');
    // Discord: IDENTIFYs beyond max_concurrency per 5 s get op 9, and no session starts.
    const now = Date.now();
    if (!this.identifyPacer.admit(shard[0], now)) {
      this.stats.refusedIdentifies.push({ shard: shard[0], at: now });
      this.send(ws, { op: OP.InvalidSession, d: false, s: null, t: null });
      this.onChange();
      return;
    }
    this.authenticated.add(ws);
    this.stats.identifies += 1;
    this.options.onIdentify?.();
    this.stats.identifyLog.push({ shard: shard[0], shardCount: shard[1], at: Date.now() });
    const session: Session = { id: `session-${++this.sessionCounter}`, shard, seq: 0, intents, socket: ws, buffer: [] };
    this.sessions.set(session.id, session);
    const guildIds = allGuildIds(this.world).filter((g) => shardOf(g, shard[1]) === shard[0]);
    this.dispatchTo(session, 'READY', {
      v: 10,
      user: { ...userObject(this.world.bot), verified: true, mfa_enabled: false, flags: 0 },
      guilds: guildIds.map((id) => ({ id, unavailable: true })),
      session_id: session.id,
      session_type: 'normal',
      resume_gateway_url: `${this.url()}${RESUME_PATH}`,
      shard,
      application: { id: this.world.applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      user_settings: {},
    });
    if ((intents & INTENTS.Guilds) !== 0) for (const id of guildIds) this.dispatchTo(session, 'GUILD_CREATE', guildCreate(this.world, id));
  }

  private resume(ws: WebSocket, d: Json): void {
    if (d.token !== this.options.token) return this.closeWith(ws, 4004, 'Authentication failed.');
    const session = typeof d.session_id === 'string' ? this.live().find((s) => s.id === d.session_id) : undefined;
    const from = Number(d.seq ?? 0);
    if (!session || (session.buffer[0] && session.buffer[0].s > from + 1)) {
      this.stats.refusedResumes += 1;
      this.send(ws, { op: OP.InvalidSession, d: false, s: null, t: null });
      this.onChange();
      return;
    }
    this.authenticated.add(ws);
    if (this.interruptedResumes.count > 0) {
      this.interruptedResumes.count -= 1;
      if (this.interruptedResumes.answer === 'reconnect') {
        session.socket = ws;
        session.disconnectedAt = undefined;
        this.send(ws, { op: OP.Reconnect, d: null, s: null, t: null });
      } else {
        this.authenticated.delete(ws);
        this.send(ws, { op: OP.InvalidSession, d: true, s: null, t: null });
      }
      this.onChange();
      return;
    }
    this.stats.resumes += 1;
    if (this.slowResumes > 0) {
      this.slowResumes -= 1;
      this.slowLinks.set(ws, []);
    }
    this.stats.resumeLog.push({ shard: session.shard[0], session: session.id, at: Date.now(), onResumeUrl: this.onResumeUrl.has(ws) });
    session.socket = ws;
    session.disconnectedAt = undefined;
    for (const event of session.buffer) if (event.s > from) this.send(ws, { op: OP.Dispatch, ...event });
    this.dispatchTo(session, 'RESUMED', {});
  }
}
