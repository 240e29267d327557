import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response, type Router } from 'express';
import { errorFields } from '../../src/logger.js';
import { newReference } from '../../src/core/reference.js';
import { scrub as scrubSecrets } from '../../src/core/scrub.js';
import { z } from 'zod';
import { runPlainCommand, type PlainCommand } from '../../src/commands/dispatch.js';
import { CREDENTIAL_REDACT_FOR_MS } from '../../src/commands/credential.js';
import { COMMANDS_WITHOUT_OPTIONS } from '../../src/commands/registry.js';
import { SET_FORMS, type SettingName } from '../../src/commands/settings.js';
import { isRedisConnectionError } from '../../src/redis-errors.js';
import type { CommandReply } from '../../src/commands/types.js';
import type { AdapterContext } from '../../src/core/platform-context.js';
import { isWebChannel, WEB_CHANNELS, WEB_WORKSPACE_ID } from './channels.js';
import { runCommandText } from './command-text.js';
import type { WebEventStore } from './event-store.js';
import { stripMention, toIncomingMessage, webCaller, webUserId } from './normalise.js';

/** What the page shows while Redis is away (the bridge reconnects by itself). */
export const QUEUE_UNAVAILABLE = 'The queue is unavailable, retrying… (the bridge lost its Redis connection)';

/** Largest JSON body the API reads. */
export const API_BODY_LIMIT = '64kb';

const channel = z.string().refine(isWebChannel, { message: `must be one of ${WEB_CHANNELS.map((c) => c.id).join(', ')}` });
const userName = z.string().trim().min(1, { message: 'enter your name' }).max(40);
const who = { channel, userName };

const schemas = {
  feedback: z.object({
    ...who,
    instanceId: z.string().min(1).max(200),
    agentMessageId: z.string().min(1).max(200),
    rating: z.enum(['positive', 'negative']),
  }),
  message: z.object({
    ...who,
    messageId: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { message: 'must be a UUID' }),
    text: z.string().max(100_000),
    mention: z.boolean().default(false),
  }),
  bind: z.object({ ...who, instanceId: z.string().trim().min(1).max(200), mode: z.enum(['mention', 'all']).default('mention') }),
  channelOnly: z.object(who),
  // The admin panel's buttons: every command of the table that takes no options.
  command: z.object({ ...who, name: z.enum(COMMANDS_WITHOUT_OPTIONS) }),
  commandText: z.object({ ...who, text: z.string().max(2000) }),
  set: z.object({ ...who, setting: z.enum(Object.keys(SET_FORMS) as [SettingName, ...SettingName[]]), value: z.string().trim().min(1).max(100) }),
  credential: z.object({
    ...who,
    instanceId: z.string().trim().min(1).max(200),
    key: z.string().trim().min(1).max(200),
    value: z.string().min(1).max(10_000),
  }),
  setup: z.object({ ...who, apiKey: z.string().min(1).max(4_096), session: z.string().max(4_096).optional() }),
};

/** Parses the body or answers 400 naming each bad field (never echoing a value). */
function body<T>(schema: z.ZodType<T>, req: Request, res: Response): T | undefined {
  const parsed = schema.safeParse(req.body);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ field: i.path.join('.') || 'body', message: i.message }));
  res.status(400).json({ error: `Invalid request: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues });
  return undefined;
}

/** Cross-site pages must not drive the API with the user's cookie. */
const sameOrigin: RequestHandler = (req, res, next) => {
  const origin = req.headers.origin;
  if (req.method === 'GET' || origin === undefined) return next();
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  if (host && host === req.headers.host) return next();
  res.status(403).json({ error: 'Cross-origin requests are not accepted.' });
};

/** Removes a secret from a reply, should any command ever echo it. */
function scrub(reply: CommandReply, secret: string): CommandReply {
  if (!secret) return reply;
  const clean = (s: string) => scrubSecrets(s, [secret]);
  return {
    ...reply,
    title: clean(reply.title),
    lines: reply.lines.map(clean),
    ...(reply.table ? { table: { columns: reply.table.columns.map(clean), rows: reply.table.rows.map((r) => r.map(clean)) } } : {}),
  };
}

/**
 * Messages this process's worker finished, by outcome: the figures of
 * `agent_bridge_messages_total` on this process's /metrics, summed over platforms. Null where
 * they are not counted here (an ingress-only process has no worker).
 */
async function finishedMessages(ctx: AdapterContext): Promise<{ replied: number | null; gaveUp: number | null }> {
  if (!ctx.metrics || ctx.config.role === 'ingress') return { replied: null, gaveUp: null };
  const { values } = await ctx.metrics.messages.get();
  const sum = (outcome: string) => values.filter((v) => v.labels.outcome === outcome).reduce((n, v) => n + v.value, 0);
  return { replied: sum('replied'), gaveUp: sum('gave_up') };
}

/** The JSON API under `/playground/api`: chat, admin commands and figures. */
export function createApiRouter(ctx: AdapterContext, store: WebEventStore): Router {
  const { commands, ingress, logger } = ctx;
  const api = express.Router();
  api.use(express.json({ limit: API_BODY_LIMIT }));
  api.use(sameOrigin);
  api.use((_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });

  // Answered from memory, so the page learns within a second that Redis is gone.
  const redisReady = () => ctx.redis.status === 'ready';
  api.get('/status', (_req, res) => {
    res.json({ queue: redisReady() ? 'ok' : 'unavailable' });
  });

  // Everything else reads or writes Redis: while it is away, say so at once instead of
  // letting the request wait out the client's retries.
  api.use((req, res, next) => {
    if (req.path === '/info' || redisReady()) return next();
    res.status(503).json({ error: QUEUE_UNAVAILABLE, code: 'queue_unavailable' });
  });

  api.get('/info', (_req, res) => {
    res.json({ mode: ctx.config.mode, workspaceId: WEB_WORKSPACE_ID, channels: WEB_CHANNELS, maxMessageChars: ctx.config.maxMessageChars });
  });

  api.get('/instances', async (_req, res) => {
    try {
      res.json({ instances: await commands.cachedInstances() });
    } catch (err) {
      logger.warn({ ...errorFields(err) }, 'playground: could not list the instances');
      res.status(502).json({ error: 'The agent service did not list the instances. Try again in a moment.' });
    }
  });

  api.get('/bindings', async (_req, res) => {
    const list = await ctx.bindings.list('web');
    res.json({ bindings: list.map(({ channelId, binding }) => ({ channelId, ...binding })) });
  });

  api.get('/queue', async (_req, res) => {
    const [counts, failures, finished] = await Promise.all([ctx.queueInfo.counts(), ctx.queueInfo.recentFailures(10), finishedMessages(ctx)]);
    // Waiting, active and failed are BullMQ's jobs (agent_bridge_queue_jobs); completed and
    // gave up are messages, as agent_bridge_messages_total counts them. BullMQ's own completed
    // count mixes both (a message given up on still completes its job) and is trimmed by
    // KEEP_COMPLETED_*, so nothing subtracts from it.
    res.json({ counts: { ...counts, completed: finished.replied, gaveUp: finished.gaveUp }, failures });
  });

  api.post('/messages', async (req, res) => {
    const b = body(schemas.message, req, res);
    if (!b) return;
    const message = toIncomingMessage({ channelId: b.channel, userName: b.userName, messageId: b.messageId, text: b.text, mention: b.mention });
    // Like a platform: the message is in the channel first, then its event reaches the bridge.
    // A double submit is in the channel once (the ingress's seen ledger); the ingress still
    // answers it, as a duplicate when the first was queued.
    if (await ctx.seen.first('web', message.messageId)) {
      try {
        await store.append({
          type: 'message',
          channelId: b.channel,
          messageId: message.messageId,
          userId: message.userId,
          userName: b.userName,
          text: stripMention(b.text).text,
          mention: message.mentionsBot,
          at: message.receivedAt,
        });
      } catch (err) {
        await ctx.seen.forget('web', message.messageId);
        throw err;
      }
    }
    res.json({ messageId: message.messageId, result: await ingress.handle(message) });
  });

  // A click on a reply's 👍/👎: one vote per user per reply, like Slack's and Discord's buttons.
  api.post('/feedback', async (req, res) => {
    const b = body(schemas.feedback, req, res);
    if (!b) return;
    if (!ctx.feedback) return void res.status(404).json({ error: 'Feedback is not recorded here.' });
    await ctx.feedback.record({
      instanceId: b.instanceId,
      agentMessageId: b.agentMessageId,
      rating: b.rating,
      platform: 'web',
      workspaceId: WEB_WORKSPACE_ID,
      channelId: b.channel,
      userId: webUserId(b.userName),
    });
    res.json({ text: 'Thanks for the feedback!' });
  });

  api.post('/bind', async (req, res) => {
    const b = body(schemas.bind, req, res);
    if (b) res.json({ reply: await commands.bind(webCaller(b.channel, b.userName), b.instanceId, b.mode) });
  });

  api.post('/unbind', async (req, res) => {
    const b = body(schemas.channelOnly, req, res);
    if (b) res.json({ reply: await commands.unbind(webCaller(b.channel, b.userName)) });
  });

  api.post('/set', async (req, res) => {
    const b = body(schemas.set, req, res);
    if (b) res.json({ reply: await commands.set(webCaller(b.channel, b.userName), b.setting, b.value) });
  });

  api.post('/command', async (req, res) => {
    const b = body(schemas.command, req, res);
    if (!b) return;
    const reply = await runPlainCommand(commands, webCaller(b.channel, b.userName), { name: b.name } as PlainCommand);
    res.json({ reply });
  });

  api.post('/command-text', async (req, res) => {
    const b = body(schemas.commandText, req, res);
    if (b) res.json(await runCommandText(commands, webCaller(b.channel, b.userName), b.text));
  });

  api.post('/credential', async (req, res) => {
    const b = body(schemas.credential, req, res);
    if (!b) return;
    const release = ctx.secrets.add(b.value);
    try {
      const reply = await commands.credential(webCaller(b.channel, b.userName), b.instanceId, b.key, b.value);
      res.json({ reply: scrub(reply, b.value) });
    } finally {
      // The agent service may quote the value later: redacted as long as on Slack and Discord.
      setTimeout(release, CREDENTIAL_REDACT_FOR_MS).unref();
    }
  });

  // Per-workspace agent accounts: the playground's workspace sets its key like a Slack admin in the modal.
  api.post('/setup', async (req, res) => {
    const b = body(schemas.setup, req, res);
    if (!b) return;
    const releases = [ctx.secrets.add(b.apiKey), ctx.secrets.add(b.session)];
    try {
      const reply = await commands.setup(webCaller(b.channel, b.userName), b.apiKey, b.session);
      res.json({ reply: scrub(scrub(reply, b.apiKey), b.session ?? '') });
    } finally {
      for (const release of releases) release();
    }
  });

  api.use((_req, res) => {
    res.status(404).json({ error: 'No such playground API route.' });
  });
  api.use(apiErrors(ctx));
  return api;
}

function apiErrors(ctx: AdapterContext): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const e = err as { type?: string; status?: number; statusCode?: number };
    const status = e.status ?? e.statusCode;
    if (isRedisConnectionError(err)) {
      res.status(503).json({ error: QUEUE_UNAVAILABLE, code: 'queue_unavailable' });
    } else if (e.type === 'entity.too.large') {
      res.status(413).json({ error: `The request body is too large (at most ${API_BODY_LIMIT}).` });
    } else if (e.type === 'entity.parse.failed') {
      // The parser's message quotes the body, which may hold a secret: never echo it.
      res.status(400).json({ error: 'The request body is not valid JSON.' });
    } else if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).json({ error: 'The request could not be read.' });
    } else {
      const ref = newReference();
      ctx.logger.error({ ...errorFields(err), ref }, 'playground API request failed');
      res.status(500).json({ error: `Something went wrong on the server (reference ${ref}).`, ref });
    }
  };
}
