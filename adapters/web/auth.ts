import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { createLoginThrottle, type LoginThrottleOptions } from '../../src/http/login-throttle.js';
import type { Logger, SecretRegistry } from '../../src/logger.js';

/** The cookie `/playground/login` sets; it holds a value derived from the token, never the token. */
export const SESSION_COOKIE = 'agent_bridge_playground';

/** Options of {@link createPlaygroundAuth}. */
export interface PlaygroundAuthOptions {
  /** `PLAYGROUND_TOKEN`; without it only this machine is let in (loopback address and Host name, no proxy). */
  token?: string;
  secrets: SecretRegistry;
  /** How long a login lasts; the cookie then expires and the server stops taking it. @defaultValue 12 hours */
  sessionTtlMs?: number;
  /** @defaultValue Date.now */
  now?: () => number;
  /** Bounds on wrong tokens per client (10 a minute by default); its clock is `now`. */
  throttle?: Omit<LoginThrottleOptions, 'now'>;
  /** Where wrong tokens are reported (one line per client and minute, never what was sent). */
  logger?: Pick<Logger, 'warn'>;
}

export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60_000;

export interface PlaygroundAuth {
  /** Lets a request through, or answers 401 (token) / 403 (foreign Host name). */
  check: RequestHandler;
  /**
   * `POST /playground/login` (the form's `token` field) or `GET /playground/login?token=…` (the
   * banner's link): sets the session cookie and goes to the page.
   */
  login: RequestHandler;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time comparison of two strings of any length. */
export function sameSecret(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/**
 * The session cookie's value for a token: its expiry (seconds since epoch) and an HMAC over it,
 * so the cookie never carries the token and a copied cookie stops working when it expires.
 */
export function sessionValue(token: string, expiresAtSeconds: number): string {
  return `${expiresAtSeconds}.${sessionMac(token, expiresAtSeconds)}`;
}

function sessionMac(token: string, expiresAtSeconds: number): string {
  return createHmac('sha256', token).update(`agent-bridge playground session v2 ${expiresAtSeconds}`).digest('base64url');
}

/** True when `value` is a session of `token` that has not expired at `nowMs`. */
export function validSession(value: string, token: string, nowMs: number): boolean {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!match) return false;
  const expires = Number(match[1]);
  // The MAC is compared even for an expired cookie: the answer's timing tells nothing either way.
  const authentic = sameSecret(match[2]!, sessionMac(token, expires));
  return authentic && expires * 1000 > nowMs;
}

/** True for a socket address on this machine (IPv4 127/8, IPv6 ::1, IPv4-mapped 127/8). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(v4);
}

/** Headers a reverse proxy adds: behind one, the loopback peer is the proxy, not the user. */
function forwarded(req: Request): boolean {
  return Object.keys(req.headers).some((name) => name === 'forwarded' || name.startsWith('x-forwarded-') || name === 'x-real-ip');
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Host names a browser on this machine uses for a loopback address. */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  const lower = name.toLowerCase();
  return lower === 'localhost' || lower.endsWith('.localhost') || lower === '::1' || /^127\.\d+\.\d+\.\d+$/.test(lower);
}

function deny(req: Request, res: Response, status: 401 | 403 | 429, message: string): void {
  res.setHeader('Cache-Control', 'no-store');
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="agent-bridge playground"');
  const page = req.method === 'GET' || (req.method === 'POST' && req.path.endsWith('/login'));
  if (page && req.accepts(['json', 'html']) === 'html') {
    res.status(status).type('html').send(denyPage(message, status === 401));
    return;
  }
  res.status(status).json({ error: message });
}

function denyPage(message: string, askToken: boolean): string {
  const form = askToken
    ? `<form action="/playground/login" method="post"><label for="token">Playground token</label>
<input id="token" name="token" type="password" autocomplete="off" required><button>Open the playground</button></form>`
    : '';
  // `message` is one of this module's constant strings, never request data. The form posts the
  // token: in a GET's query it would be written to every proxy's access log and the history.
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>agent-bridge playground</title></head>
<body><main><h1>agent-bridge playground</h1><p>${message}</p>${form}</main></body></html>`;
}

function sameOriginHeader(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

export function createPlaygroundAuth(options: PlaygroundAuthOptions): PlaygroundAuth {
  const { token, secrets } = options;
  const ttlMs = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  const now = options.now ?? Date.now;
  const throttle = createLoginThrottle({ ...options.throttle, now });
  /** Answers 429 when this client used up its wrong tokens; true when it did. */
  const heldOff = (req: Request, res: Response): boolean => {
    const wait = throttle.blocked(req);
    if (wait === undefined) return false;
    res.setHeader('Retry-After', String(wait));
    deny(req, res, 429, `Too many wrong tokens from this address: try again in ${wait} s.`);
    return true;
  };
  /** A wrong token: counted, so it cannot be guessed at the speed the server answers. */
  const wrongToken = (req: Request) => {
    const attempt = throttle.failed(req);
    if (attempt.first) options.logger?.warn({ ip: req.ip, path: req.path }, 'playground: wrong token');
    if (attempt.lockedNow) {
      options.logger?.warn(
        { ip: req.ip, failures: attempt.failures, retryAfterSeconds: attempt.retryAfterSeconds },
        'playground: too many wrong tokens from this address: its requests are refused (429) for the rest of the minute',
      );
    }
  };

  const check: RequestHandler = (req, res, next) => {
    if (!token) {
      // Without a token the playground is for this machine only: the peer must be loopback and
      // no proxy may stand between (a proxy on this machine would forward anyone), and a foreign
      // Host name means a page elsewhere reached it through DNS rebinding.
      if (isLoopbackAddress(req.socket.remoteAddress) && !forwarded(req) && isLoopbackHostHeader(req.headers.host)) return next();
      return deny(req, res, 403, 'The playground answers on localhost only. Set PLAYGROUND_TOKEN to open it to other hosts.');
    }
    // A session cookie cannot be guessed (an HMAC), and an expired one is sent by every request
    // of an open page: it is not a wrong attempt, and is checked even while a client is held off.
    const cookie = readCookie(req.headers.cookie, SESSION_COOKIE);
    if (cookie !== undefined && validSession(cookie, token, now())) return next();
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ')) {
      if (heldOff(req, res)) return;
      const presented = auth.slice(7).trim();
      const release = secrets.add(presented);
      try {
        if (sameSecret(presented, token)) {
          throttle.succeeded(req);
          return next();
        }
      } finally {
        release();
      }
      wrongToken(req);
    }
    deny(req, res, 401, 'The playground needs its token: open /playground/login?token=… or send Authorization: Bearer.');
  };

  const login: RequestHandler = (req, res) => {
    const fromBody = (req.body as { token?: unknown } | undefined)?.token;
    const presented = req.method === 'POST' ? (typeof fromBody === 'string' ? fromBody : '') : typeof req.query.token === 'string' ? req.query.token : '';
    // A page elsewhere must not post wrong tokens through this browser (holding its address off).
    if (req.method === 'POST' && req.headers.origin !== undefined && !sameOriginHeader(req.headers.origin, req.headers.host)) {
      res.status(403).json({ error: 'Cross-origin requests are not accepted.' });
      return;
    }
    const release = secrets.add(presented);
    try {
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('Referrer-Policy', 'no-referrer');
      if (!token) {
        res.redirect(303, '/playground/');
        return;
      }
      if (heldOff(req, res)) return;
      if (!presented || !sameSecret(presented, token)) {
        if (presented) wrongToken(req);
        deny(req, res, 401, 'That token is not the playground token.');
        return;
      }
      throttle.succeeded(req);
      const secure = req.secure ? '; Secure' : '';
      const expires = Math.floor((now() + ttlMs) / 1000);
      const maxAge = Math.max(0, Math.floor(ttlMs / 1000));
      res.setHeader('Set-Cookie', `${SESSION_COOKIE}=${sessionValue(token, expires)}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`);
      res.redirect(303, '/playground/');
    } finally {
      release();
    }
  };

  return { check, login };
}
