import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SlackState } from './state.js';

/** What the app sent back for one envelope. */
export interface SocketAck {
  acked: boolean;
  /** The ack's payload (`{}` for a bare ack; a view_submission's `response_action`, ...). */
  payload?: Record<string, unknown>;
  ms: number;
}

export interface EnvelopeOptions {
  retryAttempt?: number;
  retryReason?: string;
  /** How long to wait for the ack. @defaultValue 3000 (Slack's limit) */
  ackTimeoutMs?: number;
  /**
   * Which open connection carries it, oldest first (Slack picks one of an app's connections
   * per envelope, and a redelivery may take another). @defaultValue the newest
   */
  connection?: number;
}

/** Socket Mode connections an app may have open at once. */
export const MAX_CONNECTIONS = 10;

/**
 * Slack's Socket Mode: apps.connections.open hands out single-use WebSocket URLs; a
 * connection gets `hello`, then envelopes, each of which the app must ack by envelope_id.
 * The server pings every few seconds, as Slack does.
 */
export class SocketModeServer {
  private readonly wss: WebSocketServer;
  private readonly tickets = new Set<string>();
  private readonly sockets = new Set<WebSocket>();
  private readonly pending = new Map<string, (payload: Record<string, unknown>) => void>();
  private readonly pinger: NodeJS.Timeout;
  /** Connections made so far (reconnects included). */
  connections = 0;
  /**
   * Socket Mode turned off in the app's settings: each connection is told `link_disabled` instead
   * of `hello` and closed, until {@link enableLink}.
   */
  private linkDisabled = false;
  /** Connections {@link freeze} made dead: no longer read, torn down on close. */
  private readonly frozen = new Set<WebSocket>();

  constructor(
    server: Server,
    private readonly state: SlackState,
    private readonly baseUrl: string,
  ) {
    // Slack's URLs end in `/link/?ticket=…`: match the path with or without the slash.
    this.wss = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path !== '/link' && path !== '/link/') return void socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
    });
    this.wss.on('connection', (ws, req) => {
      const ticket = new URL(req.url ?? '/', 'http://x').searchParams.get('ticket') ?? '';
      if (!this.tickets.delete(ticket)) return ws.close(4001, 'invalid ticket');
      if (this.linkDisabled) {
        ws.send(JSON.stringify({ type: 'disconnect', reason: 'link_disabled', debug_info: { host: 'emulator' } }));
        return ws.close(1000);
      }
      // Slack allows an app 10 connections at once; one more is told so and closed.
      if (this.sockets.size >= MAX_CONNECTIONS) {
        ws.send(JSON.stringify({ type: 'disconnect', reason: 'too_many_websockets', debug_info: { host: 'emulator' } }));
        return ws.close(1000);
      }
      this.connections += 1;
      this.sockets.add(ws);
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('message', (data) => this.onMessage(String(data)));
      ws.send(
        JSON.stringify({
          type: 'hello',
          num_connections: this.sockets.size,
          debug_info: { host: 'emulator', build_number: 1, approximate_connection_time: 18060 },
          connection_info: { app_id: state.identity.appId },
        }),
      );
      state.emit('socket_connected', this.connections);
    });
    this.pinger = setInterval(() => {
      for (const ws of this.sockets) ws.ping();
    }, 5_000);
    this.pinger.unref();
  }

  /** apps.connections.open: a fresh single-use URL. */
  open(): Record<string, unknown> {
    const ticket = randomUUID();
    this.tickets.add(ticket);
    return { url: `${this.baseUrl.replace(/^http/, 'ws')}/link/?ticket=${ticket}&app_id=${this.state.identity.appId}` };
  }

  /** Connections open now. */
  get openConnections(): number {
    return this.sockets.size;
  }

  get connected(): boolean {
    return this.sockets.size > 0;
  }

  /** Resolves when at least one app connection has had its hello. */
  waitForConnection(timeoutMs = 10_000): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no Socket Mode connection')), timeoutMs);
      this.state.once('socket_connected', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private onMessage(text: string) {
    let msg: { envelope_id?: unknown; payload?: unknown };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      return;
    }
    if (typeof msg.envelope_id !== 'string') return;
    const resolve = this.pending.get(msg.envelope_id);
    if (resolve) {
      this.pending.delete(msg.envelope_id);
      resolve((msg.payload && typeof msg.payload === 'object' ? msg.payload : {}) as Record<string, unknown>);
    }
  }

  /**
   * Sends one envelope (`events_api`, `slash_commands` or `interactive`) on the newest
   * connection (or `options.connection`) and waits for its ack.
   */
  async send(type: 'events_api' | 'slash_commands' | 'interactive', payload: unknown, options: EnvelopeOptions = {}): Promise<SocketAck> {
    const ws = [...this.sockets].at(options.connection ?? -1);
    if (!ws) throw new Error('no Socket Mode connection to send on');
    const envelopeId = randomUUID();
    const started = Date.now();
    const acked = new Promise<Record<string, unknown> | undefined>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(envelopeId);
        resolve(undefined);
      }, options.ackTimeoutMs ?? 3_000);
      this.pending.set(envelopeId, (p) => {
        clearTimeout(timer);
        resolve(p);
      });
    });
    ws.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type,
        payload,
        accepts_response_payload: type !== 'events_api',
        ...(type === 'events_api' ? { retry_attempt: options.retryAttempt ?? 0, retry_reason: options.retryReason ?? '' } : {}),
      }),
    );
    const result = await acked;
    return { acked: result !== undefined, ...(result ? { payload: result } : {}), ms: Date.now() - started };
  }

  /** Asks every connection (or the one at `connection`, oldest first) to reconnect, as Slack does before recycling a server. */
  disconnect(reason = 'refresh_requested', connection?: number): void {
    const targets = connection === undefined ? [...this.sockets] : [[...this.sockets].at(connection)].filter((ws) => ws !== undefined);
    for (const ws of targets) ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'emulator' } }));
  }

  /**
   * The newest connection goes dead without a close (a network drop): Slack stops reading it, so
   * pings get no pong and acks go nowhere. Slack forgets it; the app must notice on its own.
   */
  freeze(connection = -1): void {
    const ws = [...this.sockets].at(connection);
    if (!ws) return;
    this.sockets.delete(ws);
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    this.frozen.add(ws);
  }

  /**
   * Socket Mode turned off in the app's settings: every connection gets `disconnect` with reason
   * `link_disabled` and is closed by Slack; new ones too, until {@link enableLink}.
   */
  disableLink(): void {
    this.linkDisabled = true;
    for (const ws of this.sockets) {
      ws.send(JSON.stringify({ type: 'disconnect', reason: 'link_disabled', debug_info: { host: 'emulator' } }));
      ws.close(1000);
    }
  }

  /** Socket Mode turned back on. */
  enableLink(): void {
    this.linkDisabled = false;
  }

  async close(): Promise<void> {
    clearInterval(this.pinger);
    for (const ws of [...this.sockets, ...this.frozen]) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
