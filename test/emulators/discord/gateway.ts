/**
 * The emulator's gateway: Discord's WebSocket protocol (v10, JSON, no compression). HELLO,
 * IDENTIFY → READY + GUILD_CREATE, heartbeats, RESUME with replay of missed events, intent
 * filtering (MessageContent blanks content), close 4014 for a disallowed privileged intent.
 * Multi-shard: IDENTIFY carries `shard: [id, count]`; a guild's events go to every session whose
 * shard is `(guild_id >> 22) % count` for its own count (Discord does not check that the sessions
 * of one bot agree on the count), DMs to shard 0; each session's READY lists only its guilds.
 * Each accepted IDENTIFY uses one session start (`onIdentify`).
 */
import type { Server } from 'node:http';
import { WebSocketServer, WebSocket } from 'ws';
import { guildCreate, userObject, type Json } from './payloads.js';
import { allGuildIds, shardOf, type World } from './world.js';

export const OP = { Dispatch: 0, Heartbeat: 1, Identify: 2, Resume: 6, Reconnect: 7, InvalidSession: 9, Hello: 10, HeartbeatAck: 11 };
export const INTENTS = { Guilds: 1 << 0, GuildMessages: 1 << 9, DirectMessages: 1 << 12, MessageContent: 1 << 15 };
/** How many events a session keeps for RESUME. */
const REPLAY_BUFFER = 1000;

export interface GatewayOptions {
  token: string;
  allowMessageContent: boolean;
  heartbeatIntervalMs: number;
  /** An IDENTIFY was accepted: it counts against the daily session-start limit. */
  onIdentify?: () => void;
}

interface Session {
  id: string;
  /** [shard_id, shard_count] from IDENTIFY ([0, 1] when absent). */
  shard: [number, number];
  seq: number;
  intents: number;
  socket?: WebSocket;
  buffer: Array<{ s: number; t: string; d: Json }>;
}

export interface GatewayStats {
  connections: number;
  identifies: number;
  resumes: number;
  heartbeats: number;
  closes: number[];
  /** Every dispatch: event name, sequence, session, shard, and whether it was written at once. */
  dispatched: Array<{ t: string; s: number; session: string; shard: number; sent: boolean }>;
  /** Every accepted IDENTIFY: which shard, when (ms), for identify-concurrency checks. */
  identifyLog: Array<{ shard: number; shardCount: number; at: number }>;
  /** Every accepted RESUME, by shard. */
  resumeLog: Array<{ shard: number; at: number }>;
}

export class Gateway {
  readonly stats: GatewayStats = {
    connections: 0,
    identifies: 0,
    resumes: 0,
    heartbeats: 0,
    closes: [],
    dispatched: [],
    identifyLog: [],
    resumeLog: [],
  };
  private readonly wss: WebSocketServer;
  private readonly sessions = new Map<string, Session>();
  /** The live session of each shard ID. */
  private readonly current = new Map<number, Session>();
  private sessionCounter = 0;

  constructor(
    server: Server,
    private readonly world: World,
    private readonly options: GatewayOptions,
    private readonly url: () => string,
    private readonly onChange: () => void,
  ) {
    this.wss = new WebSocketServer({ server });
    this.wss.on('connection', (ws) => this.onConnection(ws));
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
    for (const session of this.current.values()) if (shardOf(guildId, session.shard[1]) === session.shard[0]) this.dispatchTo(session, t, d, needs);
  }

  private dispatchTo(session: Session, t: string, d: Json, needs?: { intent: number; messageContent?: 'blank-unless-exempt'; exempt?: boolean }): void {
    if (needs && (session.intents & needs.intent) === 0) return;
    let data = d;
    if (needs?.messageContent && !needs.exempt && (session.intents & INTENTS.MessageContent) === 0) {
      data = { ...d, content: '', embeds: [], attachments: [], components: [] };
    }
    session.seq += 1;
    const event = { s: session.seq, t, d: data };
    session.buffer.push(event);
    if (session.buffer.length > REPLAY_BUFFER) session.buffer.shift();
    const sent = this.send(session.socket, { op: OP.Dispatch, ...event });
    this.stats.dispatched.push({ t, s: event.s, session: session.id, shard: session.shard[0], sent });
    this.onChange();
  }

  private sessionsOf(shardId?: number): Session[] {
    const all = [...this.current.values()];
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
      socket?.terminate();
    }
  }

  /** Tells the client its session is gone (op 9, not resumable): it must IDENTIFY again. */
  invalidateSession(shardId?: number): void {
    for (const session of this.sessionsOf(shardId)) this.send(session.socket, { op: OP.InvalidSession, d: false, s: null, t: null });
  }

  /** Grants or withdraws the Message Content intent for the next IDENTIFY. */
  setAllowMessageContent(allow: boolean): void {
    this.options.allowMessageContent = allow;
  }

  /** Whether the application has the Message Content intent (REST reads blank content without it). */
  get messageContentAllowed(): boolean {
    return this.options.allowMessageContent;
  }

  /** True when at least one shard is connected and every shard's socket is open. */
  get connected(): boolean {
    const all = [...this.current.values()];
    return all.length > 0 && all.every((s) => s.socket?.readyState === WebSocket.OPEN);
  }

  /** Shard IDs whose session has an open socket. */
  get connectedShards(): number[] {
    return [...this.current.values()].filter((s) => s.socket?.readyState === WebSocket.OPEN).map((s) => s.shard[0]).sort((a, b) => a - b);
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private send(ws: WebSocket | undefined, payload: Json): boolean {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(payload));
    return true;
  }

  private closeWith(ws: WebSocket, code: number, reason: string): void {
    this.stats.closes.push(code);
    ws.close(code, reason);
    this.onChange();
  }

  private onConnection(ws: WebSocket): void {
    this.stats.connections += 1;
    this.send(ws, { op: OP.Hello, d: { heartbeat_interval: this.options.heartbeatIntervalMs }, s: null, t: null });
    ws.on('message', (raw) => {
      let payload: Json;
      try {
        payload = JSON.parse(String(raw)) as Json;
      } catch {
        this.closeWith(ws, 4002, 'Error while decoding payload.');
        return;
      }
      if (payload.op === OP.Heartbeat) {
        this.stats.heartbeats += 1;
        this.send(ws, { op: OP.HeartbeatAck, d: null, s: null, t: null });
      } else if (payload.op === OP.Identify) this.identify(ws, payload.d ?? {});
      else if (payload.op === OP.Resume) this.resume(ws, payload.d ?? {});
    });
    ws.on('close', () => {
      for (const s of this.sessions.values()) if (s.socket === ws) s.socket = undefined;
      this.onChange();
    });
  }

  private identify(ws: WebSocket, d: Json): void {
    if (d.token !== this.options.token) return this.closeWith(ws, 4004, 'Authentication failed.');
    const intents = Number(d.intents ?? 0);
    if ((intents & INTENTS.MessageContent) !== 0 && !this.options.allowMessageContent) {
      return this.closeWith(ws, 4014, 'Disallowed intent(s).');
    }
    const shard: [number, number] = Array.isArray(d.shard) ? [Number(d.shard[0]), Number(d.shard[1])] : [0, 1];
    if (!Number.isInteger(shard[0]) || !Number.isInteger(shard[1]) || shard[1] < 1 || shard[0] < 0 || shard[0] >= shard[1]) {
      return this.closeWith(ws, 4010, 'Invalid shard.');
    }
    this.stats.identifies += 1;
    this.options.onIdentify?.();
    this.stats.identifyLog.push({ shard: shard[0], shardCount: shard[1], at: Date.now() });
    const session: Session = { id: `session-${++this.sessionCounter}`, shard, seq: 0, intents, socket: ws, buffer: [] };
    this.sessions.set(session.id, session);
    this.current.set(shard[0], session);
    const guildIds = allGuildIds(this.world).filter((g) => shardOf(g, shard[1]) === shard[0]);
    this.dispatchTo(session, 'READY', {
      v: 10,
      user: { ...userObject(this.world.bot), verified: true, mfa_enabled: false, flags: 0 },
      guilds: guildIds.map((id) => ({ id, unavailable: true })),
      session_id: session.id,
      session_type: 'normal',
      resume_gateway_url: this.url(),
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
    const session = typeof d.session_id === 'string' ? this.sessions.get(d.session_id) : undefined;
    if (d.token !== this.options.token) return this.closeWith(ws, 4004, 'Authentication failed.');
    const from = Number(d.seq ?? 0);
    if (!session || (session.buffer[0] && session.buffer[0].s > from + 1)) {
      this.send(ws, { op: OP.InvalidSession, d: false, s: null, t: null });
      return;
    }
    this.stats.resumes += 1;
    this.stats.resumeLog.push({ shard: session.shard[0], at: Date.now() });
    session.socket = ws;
    this.current.set(session.shard[0], session);
    for (const event of session.buffer) if (event.s > from) this.send(ws, { op: OP.Dispatch, ...event });
    this.dispatchTo(session, 'RESUMED', {});
  }
}
