import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler } from 'express';
import type { Adapter } from '../../src/core/adapter.js';
import type { AdapterContext, PlatformModule } from '../../src/core/platform-context.js';
import { createApiRouter } from './api.js';
import { createPlaygroundAuth } from './auth.js';
import { createWebEventStore } from './event-store.js';
import { createWebEventHub } from './hub.js';
import { createWebReplyPort } from './reply-port.js';
import { createEventsHandler } from './sse.js';
import { webVocabulary } from './vocabulary.js';

export { createWebReplyPort } from './reply-port.js';

/** The page's files: beside this module, or in the source tree when running a build from dist/. */
function publicDir(): string {
  const here = fileURLToPath(new URL('./public/', import.meta.url));
  return existsSync(here) ? here : fileURLToPath(new URL('../../../adapters/web/public/', import.meta.url));
}

/** The page runs only its own script and style, and cannot be framed. */
const pageHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
      "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  );
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  next();
};

/** The login form's body: a few fields, urlencoded; one that cannot be read is answered 400 plainly. */
const loginForm: RequestHandler = (req, res, next) => {
  express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 })(req, res, (err?: unknown) => {
    if (err === undefined) return next();
    const status = (err as { status?: number }).status;
    res.status(status === 413 ? 413 : 400).type('text').send('The login form could not be read.');
  });
};

/**
 * The playground's ingress: the page at `/` and `/playground/`, its JSON API under
 * `/playground/api/`, and Server-Sent Events at `/playground/events`. Messages go to
 * `ctx.ingress` like any platform's; replies come back from the reply port through Redis.
 */
function createWebAdapter(ctx: AdapterContext): Adapter {
  if (!ctx.config.playground.enabled) {
    return { platform: 'web', start: async () => {}, stop: async () => {} };
  }
  const { logger } = ctx;
  const store = createWebEventStore({ redis: ctx.redis, prefix: ctx.config.queue.prefix, logger });
  const hub = createWebEventHub({ redis: ctx.redis, channel: store.keys.events, logger });
  const events = createEventsHandler({ store, hub, logger });
  const auth = createPlaygroundAuth({ token: ctx.config.playground.token, secrets: ctx.secrets, logger });
  const dir = publicDir();
  const sendPage: RequestHandler = (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.sendFile('index.html', { root: dir });
  };

  const router = express.Router({ strict: false });
  router.use(pageHeaders);
  router.get('/login', auth.login);
  router.post('/login', loginForm, auth.login);
  router.use(auth.check);
  router.get('/', sendPage);
  router.use('/static', express.static(dir, { index: false, maxAge: 0 }));
  router.get('/events', events.handler);
  router.use('/api', createApiRouter(ctx, store));
  router.use((_req, res) => {
    res.status(404).type('text').send('Not found. The playground is at /playground/.');
  });
  ctx.http.get('/', pageHeaders, auth.check, sendPage);
  ctx.http.use('/playground', router);

  let releaseToken: (() => void) | undefined;
  let stopped: Promise<void> | undefined;
  return {
    platform: 'web',
    async start() {
      releaseToken ??= ctx.secrets.add(ctx.config.playground.token);
      await hub.start();
      // The bound port: with HTTP_PORT=0 the configured one says nothing.
      logger.info({ host: ctx.config.http.host, port: ctx.httpPort?.() ?? ctx.config.http.port }, 'playground ready at /playground/');
    },
    stop() {
      stopped ??= (async () => {
        events.closeAll();
        await hub.stop();
        releaseToken?.();
      })();
      return stopped;
    },
  };
}

/** The local playground, a third platform next to Slack and Discord. */
export const webPlatform: PlatformModule = {
  platform: 'web',
  vocabulary: () => webVocabulary,
  createReplyPort: (deps) => createWebReplyPort(deps),
  createAdapter: createWebAdapter,
};
