import { isIPv6 } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** Options of {@link createLoginThrottle}. */
export interface LoginThrottleOptions {
  /** Wrong attempts one client may make within {@link windowMs}; past them it is refused. @defaultValue 10 */
  maxFailures?: number;
  /** How long a client's wrong attempts count, from its first one. @defaultValue 60000 */
  windowMs?: number;
  /** Clients remembered at once; past this the oldest are forgotten. @defaultValue 10000 */
  maxClients?: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** What {@link LoginThrottle.failed} tells the caller to log. */
export interface FailedAttempt {
  /** The client's first wrong attempt in this window (log it; the next ones are counted only). */
  first: boolean;
  /** This attempt used up the client's allowance: it is refused from now to the window's end. */
  lockedNow: boolean;
  /** Wrong attempts of this client in the window so far. */
  failures: number;
  /** Seconds until the client's window ends. */
  retryAfterSeconds: number;
}

/**
 * Counts wrong passwords or tokens per client, so a password cannot be guessed at the speed the
 * server answers (about 2,000 guesses a second on one core): past `maxFailures` wrong attempts
 * within `windowMs`, every request of that client that carries credentials is refused, right
 * or wrong, until the window ends; nothing it sends is compared meanwhile. A client is its
 * socket address (IPv6: its /64, which one host usually holds whole). Behind a reverse proxy
 * every client is the proxy: there, wrong attempts by anyone hold off everyone for the window.
 */
export interface LoginThrottle {
  /** Seconds the client must wait before it may try again, or undefined when it may now. */
  blocked(req: IncomingMessage): number | undefined;
  failed(req: IncomingMessage): FailedAttempt;
  /** A right password: the client's wrong attempts are forgotten. */
  succeeded(req: IncomingMessage): void;
}

export const DEFAULT_LOGIN_MAX_FAILURES = 10;
export const DEFAULT_LOGIN_WINDOW_MS = 60_000;

/** The throttle's key for a client address: IPv4 as is, IPv6 by its first 64 bits. */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return v4[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.toLowerCase().split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = tail === undefined ? front : [...front, ...Array<string>(8 - front.length - back.length).fill('0'), ...back];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export function createLoginThrottle(options: LoginThrottleOptions = {}): LoginThrottle {
  const maxFailures = options.maxFailures ?? DEFAULT_LOGIN_MAX_FAILURES;
  const windowMs = options.windowMs ?? DEFAULT_LOGIN_WINDOW_MS;
  const maxClients = options.maxClients ?? 10_000;
  const now = options.now ?? Date.now;
  const clients = new Map<string, { since: number; failures: number }>();

  const current = (key: string, at: number) => {
    const entry = clients.get(key);
    if (entry && at - entry.since >= windowMs) {
      clients.delete(key);
      return undefined;
    }
    return entry;
  };
  const secondsLeft = (since: number, at: number) => Math.max(1, Math.ceil((since + windowMs - at) / 1000));

  return {
    blocked(req) {
      const at = now();
      const entry = current(clientKey(req.socket.remoteAddress), at);
      return entry && entry.failures >= maxFailures ? secondsLeft(entry.since, at) : undefined;
    },
    failed(req) {
      const at = now();
      const key = clientKey(req.socket.remoteAddress);
      let entry = current(key, at);
      if (!entry) {
        if (clients.size >= maxClients) {
          for (const [k, e] of clients) if (at - e.since >= windowMs) clients.delete(k);
          // Still full: forget the oldest (Map keeps insertion order).
          if (clients.size >= maxClients) clients.delete(clients.keys().next().value!);
        }
        entry = { since: at, failures: 0 };
        clients.set(key, entry);
      }
      entry.failures++;
      return {
        first: entry.failures === 1,
        lockedNow: entry.failures === maxFailures,
        failures: entry.failures,
        retryAfterSeconds: secondsLeft(entry.since, at),
      };
    },
    succeeded(req) {
      clients.delete(clientKey(req.socket.remoteAddress));
    },
  };
}
