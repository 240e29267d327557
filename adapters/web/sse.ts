import type { Request, RequestHandler, Response } from 'express';
import { errorFields } from '../../src/logger.js';
import type { Logger } from '../../src/logger.js';
import { isWebChannel } from './channels.js';
import type { WebEventStore } from './event-store.js';
import { compareStreamIds, isStreamId, type StoredWebEvent } from './events.js';
import type { WebEventHub } from './hub.js';

/** Options of {@link createEventsHandler}. */
export interface EventsHandlerOptions {
  store: WebEventStore;
  hub: WebEventHub;
  logger: Pick<Logger, 'warn'>;
  /** Events sent on open. @defaultValue 200 */
  historyCount?: number;
  /** @defaultValue 20 s */
  heartbeatMs?: number;
}

export interface EventsHandler {
  handler: RequestHandler;
  /** Ends every open stream (shutdown). */
  closeAll(): void;
}

function write(res: Response, event: StoredWebEvent): void {
  res.write(`id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`);
}

/**
 * `GET /playground/events?channel=general`: Server-Sent Events of one channel. It first sends
 * the channel's recent history (or what came after `Last-Event-ID` on a reconnect), then live
 * events; live events that arrive while the history is read are held back and deduplicated.
 */
export function createEventsHandler(options: EventsHandlerOptions): EventsHandler {
  const open = new Set<Response>();
  const historyCount = options.historyCount ?? 200;
  const heartbeatMs = options.heartbeatMs ?? 20_000;

  const handler = async (req: Request, res: Response) => {
    const channelId = typeof req.query.channel === 'string' ? req.query.channel : '';
    if (!isWebChannel(channelId)) {
      res.status(400).json({ error: 'Name a playground channel: /playground/events?channel=general' });
      return;
    }
    const lastHeader = req.headers['last-event-id'];
    const after = typeof lastHeader === 'string' && isStreamId(lastHeader) ? lastHeader : undefined;

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.write('retry: 2000\n\n');
    open.add(res);

    let lastSent = after ?? '0-0';
    let held: StoredWebEvent[] | undefined = [];
    const send = (event: StoredWebEvent) => {
      if (compareStreamIds(event.id, lastSent) <= 0) return;
      lastSent = event.id;
      write(res, event);
    };
    const stopListening = options.hub.listen(channelId, (event) => (held ? held.push(event) : send(event)));
    const heartbeat = setInterval(() => res.write(': ping\n\n'), heartbeatMs);
    heartbeat.unref();
    const cleanup = () => {
      clearInterval(heartbeat);
      stopListening();
      open.delete(res);
    };
    req.on('close', cleanup);

    try {
      const history = await options.store.history(channelId, { count: historyCount, afterId: after });
      for (const event of history) send(event);
    } catch (err) {
      options.logger.warn({ ...errorFields(err) }, 'playground: could not read the channel history');
      res.write(`event: problem\ndata: ${JSON.stringify({ error: 'Could not read the channel history from Redis.' })}\n\n`);
    }
    for (const event of held) send(event);
    held = undefined;
    // Tells the page the history is in, so it can announce only what comes after.
    res.write('event: ready\ndata: {}\n\n');
  };

  return {
    handler,
    closeAll() {
      for (const res of open) res.end();
      open.clear();
    },
  };
}
