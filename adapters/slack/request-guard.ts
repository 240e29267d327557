import type { RequestHandler } from 'express';

/** Slack's own replay window: a request signed more than 5 minutes away from now is refused. */
export const SLACK_TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

/** Largest Slack request read (events and interactivity payloads stay far below it). */
export const SLACK_MAX_BODY_BYTES = 1_000_000;

/** Options of {@link slackRequestGuard}. */
export interface SlackRequestGuardOptions {
  /** True once the adapter stopped: requests are answered 503 so Slack retries elsewhere. */
  stopped: () => boolean;
  /** @defaultValue {@link SLACK_MAX_BODY_BYTES} */
  maxBodyBytes?: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

const SIGNATURE = /^v0=[0-9a-f]{64}$/;
const TIMESTAMP = /^\d{1,12}$/;

/**
 * Runs before Bolt, on headers alone: a request that cannot be a signed Slack request (no
 * signature, a timestamp outside ±5 minutes, a body over the limit) is refused before a byte
 * of its body is read, and its connection closed, so unauthenticated clients cannot make the
 * bridge read megabytes. Bolt then checks the signature itself against the body.
 */
export function slackRequestGuard(options: SlackRequestGuardOptions): RequestHandler {
  const maxBody = options.maxBodyBytes ?? SLACK_MAX_BODY_BYTES;
  const now = options.now ?? Date.now;
  return (req, res, next) => {
    // `Connection: close`: Node would otherwise read (and discard) the unread body to reuse the connection.
    const refuse = (status: number) => void res.set('Connection', 'close').status(status).end();
    if (options.stopped()) return void res.set({ Connection: 'close', 'Retry-After': '5' }).status(503).end();
    const signature = req.headers['x-slack-signature'];
    const timestamp = req.headers['x-slack-request-timestamp'];
    if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return refuse(401);
    if (typeof timestamp !== 'string' || !TIMESTAMP.test(timestamp)) return refuse(401);
    if (Math.abs(Number(timestamp) * 1000 - now()) > SLACK_TIMESTAMP_TOLERANCE_MS) return refuse(401);
    const length = Number(req.headers['content-length'] ?? 0);
    if (!Number.isFinite(length) || length > maxBody) return refuse(413);
    next();
  };
}

/**
 * Slack redelivers a request answered with anything but a 2xx, 3 times, unless the answer says
 * `X-Slack-No-Retry: 1`. A 4xx (a body Bolt cannot parse or process, a bad signature, too
 * large) would fail the same way again, so it says so. A 503 while stopping does not: another
 * replica should get the redelivery.
 */
export function noRetryOnClientErrors(): RequestHandler {
  return (_req, res, next) => {
    const writeHead = res.writeHead.bind(res) as (status: number, ...rest: unknown[]) => typeof res;
    res.writeHead = ((status: number, ...rest: unknown[]) => {
      if (status >= 400 && status < 500 && !res.headersSent) res.setHeader('X-Slack-No-Retry', '1');
      return writeHead(status, ...rest);
    }) as typeof res.writeHead;
    next();
  };
}
