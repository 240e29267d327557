import type { RequestHandler, Response } from 'express';
import { CHANNEL_LIFE_EVENTS } from './channel-life.js';

/**
 * Slack's 200 for a message event is its promise never to send that event again, so it goes out
 * once the message is stored (queued, or dropped on the record): a bridge killed in between
 * would otherwise lose a message Slack considers delivered. Bolt acks events before any
 * listener runs, so this holds the response Bolt writes until the listener releases it, for at
 * most `maxHoldMs` (Slack waits 3 s). When Redis is that slow the 200 goes anyway, as issue #6
 * asks: the ingress keeps trying within its bound and tells the user if it cannot store the
 * message. Everything else (commands, actions, views) is answered the moment Bolt answers it.
 */
export class AckHold {
  private released = false;
  private started = false;
  private flush: (() => void) | undefined;
  /** Set by {@link refuse}: the answer says "not now", so Slack sends the event again. */
  refused = false;

  /** Bolt's middleware has the event: a listener will release the hold, or the middleware will. */
  begin(): void {
    this.started = true;
  }

  /**
   * Another delivery of the message is still at work on it (it may yet die): answer so that
   * Slack sends this event again later (HTTP 503, no Socket Mode ack) instead of a 200 that
   * would be Slack's last word on it. No effect once the answer went (released, or late).
   */
  refuse(): void {
    if (this.released) return;
    this.refused = true;
    this.release();
  }

  /** The message is stored (or will never be): the 200 may go. Safe to call more than once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.flush?.();
  }

  /** @internal Runs `send` once released, or `late` if `maxHoldMs` passes first. */
  hold(send: () => void, late: () => void, maxHoldMs: number): void {
    if (this.released) return send();
    const timer = setTimeout(() => {
      this.flush = undefined;
      late();
    }, maxHoldMs);
    this.flush = () => {
      clearTimeout(timer);
      send();
    };
    // Bolt acks before its middleware runs; an event it drops there (authorization failed)
    // never reaches the middleware, and nothing would release its ack.
    setImmediate(() => {
      if (!this.started) this.release();
    });
  }
}

/** The key under which a request's hold reaches Bolt's context (`customPropertiesExtractor`). */
export const ACK_HOLD_KEY = 'agentBridgeAckHold';

/** Slack waits 3 s for an answer; this leaves a second for a busy event loop and the network. */
export const MAX_ACK_HOLD_MS = 2_000;

const holds = new WeakMap<object, AckHold>();

/** The hold of a request, for Bolt's `customPropertiesExtractor`. */
export function ackHoldOf(req: object): Record<string, AckHold> {
  const hold = holds.get(req);
  return hold ? { [ACK_HOLD_KEY]: hold } : {};
}

/** The hold Bolt's context carries, if the request has one. */
export function ackHoldIn(context: object | undefined): AckHold | undefined {
  const hold = (context as Record<string, unknown> | undefined)?.[ACK_HOLD_KEY];
  return hold instanceof AckHold ? hold : undefined;
}

/**
 * Event types whose ack waits for the message to be stored; and a channel's archive, deletion or
 * the bot's removal, for the mark that keeps its queued messages from the agent (channel-life.ts):
 * acked and then lost to a restart, Slack would not say it again.
 */
const HELD_EVENTS: ReadonlySet<string> = new Set(['message', 'app_mention', ...CHANNEL_LIFE_EVENTS]);

function isHeldEvent(body: unknown): boolean {
  const b = body as { type?: unknown; event?: { type?: unknown } } | undefined;
  return b?.type === 'event_callback' && typeof b.event?.type === 'string' && HELD_EVENTS.has(b.event.type);
}

/**
 * Express middleware, mounted before Bolt on the events path: gives the request a hold and
 * defers the response Bolt writes for a message event until the hold is released.
 */
export function holdMessageAcks(options: { maxHoldMs?: number; onLate?: () => void } = {}): RequestHandler {
  const maxHoldMs = options.maxHoldMs ?? MAX_ACK_HOLD_MS;
  return (req, res, next) => {
    const hold = new AckHold();
    holds.set(req, hold);
    deferResponse(res, () => isHeldEvent(req.body), hold, maxHoldMs, options.onLate);
    next();
  };
}

/** Wraps `writeHead` and `end` so that a held request's first answer waits for its hold. */
function deferResponse(res: Response, held: () => boolean, hold: AckHold, maxHoldMs: number, onLate?: () => void): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => Response;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  let head: unknown[] | undefined;
  let deferring = false;
  res.writeHead = ((...args: unknown[]) => {
    if (deferring) return res;
    if (!held()) return writeHead(...args);
    head = args;
    return res;
  }) as Response['writeHead'];
  res.end = ((...args: unknown[]) => {
    if (deferring) return res;
    if (!head && !held()) return end(...args);
    deferring = true;
    const status = head ?? [200];
    const send = () => {
      // Refused: any non-2xx makes Slack retry (immediately, then after 1 and 5 minutes).
      if (hold.refused) {
        writeHead(503, { 'content-type': 'text/plain' });
        end('another delivery of this message is under way; send it again');
        return;
      }
      writeHead(...status);
      end(...args);
    };
    hold.hold(
      send,
      () => {
        onLate?.();
        send();
      },
      maxHoldMs,
    );
    return res;
  }) as Response['end'];
}

/** What the Socket Mode client emits as `slack_event` (the parts used here). */
interface SocketModeEvent {
  ack: (response?: Record<string, unknown>) => Promise<void>;
  body?: unknown;
  [ACK_HOLD_KEY]?: AckHold;
}

/**
 * Socket Mode's envelope ack is the same promise as the HTTP 200: Slack redelivers an envelope
 * that is not acked. Bolt calls `ack()` before any listener and waits for it, so the held ack
 * answers Bolt at once and sends the real one when the hold is released (or `maxHoldMs` passed).
 * The client's `slack_event` is wrapped because Bolt's receiver subscribes to it in its
 * constructor, before the app could add anything.
 */
export function holdSocketModeAcks(
  client: { emit: (name: string | symbol, ...args: unknown[]) => boolean },
  options: { maxHoldMs?: number; onLate?: () => void; onAckError?: (err: unknown) => void } = {},
): void {
  const maxHoldMs = options.maxHoldMs ?? MAX_ACK_HOLD_MS;
  const emit = client.emit.bind(client);
  client.emit = (name, ...args) => {
    const event = args[0] as SocketModeEvent | undefined;
    if (name !== 'slack_event' || typeof event?.ack !== 'function' || !isHeldEvent(event.body)) return emit(name, ...args);
    const hold = new AckHold();
    const ack = event.ack;
    // Refused: no ack, and Slack redelivers the envelope.
    const send = (response?: Record<string, unknown>) => () => void (hold.refused ? undefined : ack(response).catch((err: unknown) => options.onAckError?.(err)));
    const held: SocketModeEvent = {
      ...event,
      [ACK_HOLD_KEY]: hold,
      ack: async (response) => {
        const sendNow = send(response);
        hold.hold(
          sendNow,
          () => {
            options.onLate?.();
            sendNow();
          },
          maxHoldMs,
        );
      },
    };
    return emit(name, held, ...args.slice(1));
  };
}

/** The hold of a Socket Mode event, for Bolt's `customPropertiesExtractor`. */
export function socketAckHoldOf(args: Record<string, unknown>): Record<string, AckHold> {
  const hold = args[ACK_HOLD_KEY];
  return hold instanceof AckHold ? { [ACK_HOLD_KEY]: hold } : {};
}
