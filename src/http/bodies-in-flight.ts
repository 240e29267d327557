import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';

/** True when the request announces a body (GET probes and page loads do not). */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Caps the requests whose body is still arriving. A client that sends a body slowly holds a
 * connection (and a file handle) until the request timeout; past `max` of them, further
 * requests with a body are answered 503 at once, without reading it, and their connection is
 * closed. Requests without a body (health probes, metrics, pages) are never counted, so they
 * keep answering during a flood of slow POSTs.
 */
export function limitBodiesInFlight(max: number, logger: Logger, logEveryMs = 60_000): RequestHandler {
  let inFlight = 0;
  let refusedSinceLog = 0;
  let lastLog = 0;
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    if (inFlight >= max) {
      refusedSinceLog++;
      const now = Date.now();
      // One line per interval, not per refusal: a flood must not flood the log too.
      if (now - lastLog >= logEveryMs) {
        logger.warn({ inFlight, refused: refusedSinceLog, path: req.path }, 'too many request bodies in flight: refused with 503');
        lastLog = now;
        refusedSinceLog = 0;
      }
      res.set({ Connection: 'close', 'Retry-After': '5' }).status(503).type('text/plain').send('busy, try again');
      return;
    }
    inFlight++;
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      inFlight--;
    };
    req.once('end', release);
    req.once('close', release);
    res.once('close', release);
    next();
  };
}
