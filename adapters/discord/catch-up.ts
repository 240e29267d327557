import { WebSocket } from 'undici';
import type { GatewaySession, RawPacket } from './gateway-sessions.js';
import { foldReplay, REPLAYED_MESSAGE_EVENTS } from './replay-fold.js';

/** How long a catch-up may take before it is given up (the replay of a few minutes is quick). */
const CATCH_UP_LIMIT_MS = 60_000;

export type CatchUpResult =
  | { outcome: 'resumed'; replayed: number; messages: number }
  /** Discord answered op 9: the session ended (closed normally) or its resume window passed. */
  | { outcome: 'expired' }
  /** `retry`: the session is likely still resumable (the connection failed, Discord asked to reconnect). */
  | { outcome: 'failed'; reason: string; retry?: boolean };

/** Closes after which Discord says to start a new session (4007 invalid seq, 4009 timed out): the session is over. */
const SESSION_OVER = new Set([4007, 4009]);
/** Closes no second try gets past (token, shard, version or intents refused); any other may be passing. */
const REFUSED = new Set([4004, 4010, 4011, 4012, 4013, 4014]);

/** Any close code but 1000/1001 leaves a session resumable (4200: @discordjs/ws's "resuming"). */
const KEEP_RESUMABLE = 4200;

export interface CatchUpOptions {
  session: GatewaySession;
  token: string;
  /**
   * A replayed message event (MESSAGE_CREATE, _UPDATE, _DELETE or _DELETE_BULK, folded by
   * replay-fold.ts), called in the gateway's order; resolves once it is handled. The session is
   * ended only after every one settled, so a crash meanwhile leaves it resumable.
   */
  onMessage: (packet: RawPacket) => Promise<void>;
  signal: AbortSignal;
  limitMs?: number;
}

/**
 * RESUMEs another process's session of a shard on a connection of its own, hands over the
 * message events Discord replays (those sent while no process held the shard), then closes with
 * 1000, which ends that session. The new session of this process runs beside it, so nothing sent
 * between the two is missed; messages both sessions received are one job (the ingress dedupe).
 * The replay is handed over whole once RESUMED says it is complete, so that a message sent and
 * then edited or deleted in the gap is queued as it ended (replay-fold.ts), never first as sent:
 * edits and deletions of messages queued before the gap are handed over too, in their order.
 * Other events are not handed over: guild and channel state comes with the new session's READY,
 * and interactions older than Discord's 3 seconds can no longer be answered.
 */
export function catchUp(options: CatchUpOptions): Promise<CatchUpResult> {
  const { session } = options;
  return new Promise<CatchUpResult>((resolve) => {
    const ws = new WebSocket(`${session.resumeURL}?v=10&encoding=json`);
    let heartbeat: NodeJS.Timeout | undefined;
    let seq = session.sequence;
    let replayed = 0;
    /** The replayed message events, until RESUMED. */
    const replay: RawPacket[] = [];
    const handling: Array<Promise<void>> = [];
    let messages = 0;
    const handOver = () => {
      for (const packet of foldReplay(replay.splice(0))) {
        if (packet.t === 'MESSAGE_CREATE') messages += 1;
        handling.push(options.onMessage(packet));
      }
    };
    let settled = false;
    /** RESUMED came: what follows is live traffic, which this process's own session also gets. */
    let resumed = false;
    const finish = (result: CatchUpResult, closeCode = 1000) => {
      if (settled) return;
      settled = true;
      clearTimeout(limit);
      clearInterval(heartbeat);
      options.signal.removeEventListener('abort', onAbort);
      try {
        ws.close(closeCode);
      } catch {
        // Not open yet: nothing to close.
      }
      resolve(result);
    };
    // Stopping meanwhile: leave the session resumable (4000-range close) for the next process.
    const onAbort = () => finish({ outcome: 'failed', reason: 'stopped' }, 4000);
    options.signal.addEventListener('abort', onAbort, { once: true });
    // Past the limit the session is ended: what was replayed so far is handed over (not waited for).
    const limit = setTimeout(() => {
      if (!resumed) handOver();
      finish({ outcome: 'failed', reason: 'timed out' });
    }, options.limitMs ?? CATCH_UP_LIMIT_MS);
    const send = (payload: unknown) => ws.send(JSON.stringify(payload));

    ws.addEventListener('message', (event) => {
      let packet: RawPacket;
      try {
        packet = JSON.parse(String(event.data)) as RawPacket;
      } catch {
        return;
      }
      if (packet.op === 10) {
        const interval = Number((packet.d as { heartbeat_interval?: unknown } | undefined)?.heartbeat_interval) || 41_250;
        heartbeat = setInterval(() => send({ op: 1, d: seq }), interval);
        send({ op: 6, d: { token: options.token, session_id: session.sessionId, seq: session.sequence } });
      } else if (packet.op === 9 && packet.d === true) {
        // "The session may be resumable": later, so it is kept (not closed with 1000) and tried again.
        finish({ outcome: 'failed', reason: 'Discord answered op 9 (may be resumable)', retry: true }, KEEP_RESUMABLE);
      } else if (packet.op === 9) {
        finish({ outcome: 'expired' });
      } else if (packet.op === 7) {
        // Not with 1000, which would end the very session to catch up on: it is RESUMEd again.
        finish({ outcome: 'failed', reason: 'Discord asked to reconnect', retry: true }, KEEP_RESUMABLE);
      } else if (packet.op === 1) {
        send({ op: 1, d: seq });
      } else if (packet.op === 0 && !resumed) {
        if (typeof packet.s === 'number') seq = Math.max(seq, packet.s);
        if (packet.t === 'RESUMED') {
          resumed = true;
          handOver();
          void Promise.allSettled(handling).then((settled) => {
            const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
            if (!failed) return finish({ outcome: 'resumed', replayed, messages });
            const why = failed.reason instanceof Error ? failed.reason.message : String(failed.reason);
            finish({ outcome: 'failed', reason: `replayed messages could not be handed over (${why})` });
          });
          return;
        }
        replayed += 1;
        if (REPLAYED_MESSAGE_EVENTS.has(packet.t ?? '')) replay.push(packet);
      }
    });
    ws.addEventListener('close', (event) => {
      if (resumed) return;
      if (SESSION_OVER.has(event.code)) return finish({ outcome: 'expired' });
      finish({ outcome: 'failed', reason: `gateway closed the connection (${event.code})`, retry: !REFUSED.has(event.code) });
    });
    ws.addEventListener('error', () => resumed || finish({ outcome: 'failed', reason: 'connection failed', retry: true }, KEEP_RESUMABLE));
  });
}
