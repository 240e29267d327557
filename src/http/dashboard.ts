import { createHash, timingSafeEqual } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger.js';
import { createLoginThrottle, type LoginThrottle, type LoginThrottleOptions } from './login-throttle.js';

/** Where the queue dashboard lives on the HTTP server. */
export const DASHBOARD_PATH = '/admin/queues';

const REALM = 'agent-bridge queue dashboard';

/** Options of {@link mountDashboard}. */
export interface DashboardOptions {
  /** Queues shown (and operable: retry, remove, pause) on the dashboard. */
  queues: Queue[];
  /** `ADMIN_USER`. The dashboard is off unless both user and password are set. */
  user?: string;
  /** `ADMIN_PASSWORD`. */
  password?: string;
  logger: Logger;
  /** Bounds on wrong passwords per client (10 a minute by default). */
  throttle?: LoginThrottleOptions;
}

/**
 * Mounts Bull Board at {@link DASHBOARD_PATH} behind HTTP basic auth. Without both a user and
 * a password nothing is mounted and the path answers 404 like any unknown path.
 * Resolves with whether the dashboard is on. Bull Board (about 3 MB of heap that every major GC
 * walks) loads only when the dashboard is on; call this where its route belongs, and await it.
 */
export async function mountDashboard(app: Express, options: DashboardOptions): Promise<boolean> {
  const { user, password, logger } = options;
  if (!user || !password) {
    logger.info('queue dashboard off: set ADMIN_USER and ADMIN_PASSWORD to turn it on');
    return false;
  }

  const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/express'),
  ]);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: options.queues.map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
  });

  const board = serverAdapter.getRouter() as Express;
  board.disable('x-powered-by');
  app.use(DASHBOARD_PATH, noFraming, sameOriginWrites(logger), basicAuth(user, password, logger, createLoginThrottle(options.throttle)), board);
  logger.info({ path: DASHBOARD_PATH, queues: options.queues.map((q) => q.name) }, 'queue dashboard on');
  return true;
}

/**
 * The board in a frame of another page would run its buttons with the admin's cached password
 * and from its own origin, so a page could trick a click on "Empty" or "Clean" (clickjacking).
 */
function noFraming(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser resends cached basic-auth credentials with any request to the dashboard, including
 * a form or fetch posted by a page elsewhere (CSRF): a request that changes something (retry,
 * remove, pause) must come from the dashboard's own origin. Browsers send `Origin` on such
 * requests, and `Sec-Fetch-Site` when they know the request crossed sites; tools like curl
 * send neither and are let through to the password check.
 */
function sameOriginWrites(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    const foreign = origin !== undefined ? !sameHost(origin, req.headers.host) : site === 'cross-site' || site === 'same-site';
    if (!foreign) return next();
    logger.warn({ ip: req.ip, path: req.originalUrl, method: req.method }, 'queue dashboard: refused a change from another origin');
    res.status(403).set('Cache-Control', 'no-store').type('text/plain').send('Changes to the queue dashboard must come from the dashboard itself');
  };
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    // `Origin: null` (sandboxed frames, file pages) and garbage are foreign.
    return false;
  }
}

function basicAuth(user: string, password: string, logger: Logger, throttle: LoginThrottle) {
  const expectedUser = digest(user);
  const expectedPassword = digest(password);
  const challenge = (res: Response) =>
    res.set('WWW-Authenticate', `Basic realm="${REALM}", charset="UTF-8"`).set('Cache-Control', 'no-store').type('text/plain');
  return (req: Request, res: Response, next: NextFunction) => {
    // A client past its wrong attempts is refused before anything it sent is compared.
    const wait = throttle.blocked(req);
    if (wait !== undefined) {
      res.status(429).set({ 'Retry-After': String(wait), 'Cache-Control': 'no-store' }).type('text/plain');
      res.send(`Too many wrong passwords from this address: try again in ${wait} s`);
      return;
    }
    const given = parseBasic(req.headers.authorization);
    // Both comparisons always run, on fixed-length digests: neither the length of the secrets
    // nor which of the two was wrong shows in the response time.
    const userOk = timingSafeEqual(digest(given?.user ?? ''), expectedUser);
    const passwordOk = timingSafeEqual(digest(given?.password ?? ''), expectedPassword);
    if (given && userOk && passwordOk) {
      throttle.succeeded(req);
      return next();
    }

    if (req.headers.authorization !== undefined) {
      const attempt = throttle.failed(req);
      // Never log what was sent: a mistyped password is usually close to the real one. One line
      // for a client's first wrong attempt and one when it is held off, not one per guess.
      if (attempt.first) logger.warn({ ip: req.ip, path: req.originalUrl }, 'queue dashboard: wrong user or password');
      if (attempt.lockedNow) {
        logger.warn(
          { ip: req.ip, failures: attempt.failures, retryAfterSeconds: attempt.retryAfterSeconds },
          'queue dashboard: too many wrong passwords from this address: its requests are refused (429) for the rest of the minute',
        );
      }
    }
    challenge(res).status(401).send('Authentication required');
  };
}

function parseBasic(header: string | undefined): { user: string; password: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
