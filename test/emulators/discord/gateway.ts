/**
 * The emulator's gateway: Discord's WebSocket protocol (v10, JSON, no compression). HELLO,
 * IDENTIFY → READY + GUILD_CREATE, heartbeats, RESUME with replay of missed events, intent
 * filtering (MessageContent blanks content), close 4014 for a disallowed privileged intent.
 */
import type { Server } from 'node:http';
import { WebSocketServer, WebSocket } from 'ws';
import { guildCreate, userObject, type Json } from './payloads.js';
import type { World } from './world.js';

export const OP = { Dispatch: 0, Heartbeat: 1, Identify: 2, Resume: 6, Reconnect: 7, InvalidSession: 9, Hello: 10, HeartbeatAck: 11 };
export const INTENTS = { Guilds: 1 << 0, GuildMessages: 1 << 9, DirectMessages: 1 << 12, MessageContent: 1 << 15 };
/** How many events a session keeps for RESUME. */
const REPLAY_BUFFER = 1000;

export interface GatewayOptions {
  token: string;
  allowMessageContent: boolean;
  heartbeatIntervalMs: number;
}

interface Session {
  id: string;
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
  /** Every dispatch: event name, sequence, session, and whether it was written at once. */
  dispatched: Array<{ t: string; s: number; session: string; sent: boolean }>;
}

export class Gateway {
  readonly stats: GatewayStats = { connections: 0, identifies: 0, resumes: 0, heartbeats: 0, closes: [], dispatched: [] };
  private readonly wss: WebSocketServer;
  private readonly sessions = new Map<string, Session>();
  private current?: Session;
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

  /** Sends an event to the current session (buffered for RESUME when the socket is gone). */
  dispatch(t: string, d: Json, needs?: { intent: number; messageContent?: 'blank-unless-exempt'; exempt?: boolean }): void {
    const session = this.current;
    if (!session) return;
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
    this.stats.dispatched.push({ t, s: event.s, session: session.id, sent });
    this.onChange();
  }

  /** Cuts the connection without a close frame, as a network failure would. The session stays resumable. */
  drop(): void {
    const socket = this.current?.socket;
    if (this.current) this.current.socket = undefined;
    socket?.terminate();
  }

  /** Tells the client its session is gone (op 9, not resumable): it must IDENTIFY again. */
  invalidateSession(): void {
    this.send(this.current?.socket, { op: OP.InvalidSession, d: false, s: null, t: null });
  }

  /** Grants or withdraws the Message Content intent for the next IDENTIFY. */
  setAllowMessageContent(allow: boolean): void {
    this.options.allowMessageContent = allow;
  }

  get connected(): boolean {
    return this.current?.socket?.readyState === WebSocket.OPEN;
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
    this.stats.identifies += 1;
    const session: Session = { id: `session-${++this.sessionCounter}`, seq: 0, intents, socket: ws, buffer: [] };
    this.sessions.set(session.id, session);
    this.current = session;
    this.dispatch('READY', {
      v: 10,
      user: { ...userObject(this.world.bot), verified: true, mfa_enabled: false, flags: 0 },
      guilds: [{ id: this.world.guildId, unavailable: true }],
      session_id: session.id,
      session_type: 'normal',
      resume_gateway_url: this.url(),
      shard: [0, 1],
      application: { id: this.world.applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      user_settings: {},
    });
    if ((intents & INTENTS.Guilds) !== 0) this.dispatch('GUILD_CREATE', guildCreate(this.world));
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
    session.socket = ws;
    this.current = session;
    for (const event of session.buffer) if (event.s > from) this.send(ws, { op: OP.Dispatch, ...event });
    this.dispatch('RESUMED', {});
  }
}
