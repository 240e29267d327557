/**
 * The emulator's REST API under /api/v10. Paths are percent-decoded before matching (the client
 * encodes `@original` as `%40original`). `Authorization: Bot <token>` is checked where Discord
 * checks it; interaction callbacks and webhooks carry no Authorization header.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { blankContent, channelObject, mentionedIds, messageObject, userObject, type Json } from './payloads.js';
import type { Fault, Store } from './store.js';
import { allChannels, allUsers, snowflake, type EmuChannel, type World } from './world.js';
import { archivedThreadPost, placeRefusal } from './rest-places.js';
import { createFlags } from './message-flags.js';
import { bulkDelete } from './bulk-delete.js';

export interface Reply {
  status: number;
  body?: unknown;
  /** A body sent as is (not JSON), with its content type. */
  raw?: { text: string; contentType: string };
  headers?: Record<string, string>;
}

export interface Ctx {
  method: string;
  path: string;
  query: Record<string, string>;
  json: Json | undefined;
  params: string[];
}

export interface RestHooks {
  /** A message the bot created: store it and dispatch MESSAGE_CREATE like Discord does. */
  botMessage(channel: EmuChannel, message: Json): void;
  changed(): void;
  /** Whether the application has the Message Content intent: without it REST reads blank content too. */
  messageContentAllowed(): boolean;
  /** A post unarchived a thread: THREAD_UPDATE, as Discord sends it. */
  threadUpdated(thread: EmuChannel): void;
  /** Messages bulk-deleted (already gone from the store): MESSAGE_DELETE_BULK, as Discord sends it. */
  bulkDeleted(channel: EmuChannel, ids: string[]): void;
}

/** What `GET /gateway/bot` reports; tests change it while the emulator runs. */
export interface GatewayInfo {
  /** The recommended shard count (Discord raises it as the bot joins guilds). */
  shards: number;
  maxConcurrency: number;
  /** Session starts left today (each accepted IDENTIFY uses one), and ms until the count resets. */
  sessionStartLimit: { total: number; remaining: number; resetAfterMs: number };
  /** How long `enforce_nonce` drops a repeated nonce. */
  nonceWindowMs: number;
  /** How long after an interaction its callback is taken (Discord: 3 s; later: 404, code 10062). */
  interactionAckMs: number;
  /** How long its token takes edits and follow-ups (Discord: 15 minutes; later: 401, code 50027). */
  interactionTokenMs: number;
}

type Handler = (ctx: Ctx) => Reply;
const err = (status: number, code: number, message: string, extra: Json = {}): Reply => ({ status, body: { message, code, ...extra } });

export class RestApi {
  private readonly routes: Array<[string, RegExp, boolean, Handler]> = [];

  constructor(
    private readonly world: World,
    private readonly store: Store,
    private readonly token: () => string,
    private readonly gatewayUrl: () => string,
    private readonly gatewayInfo: GatewayInfo,
    private readonly hooks: RestHooks,
  ) {
    const S = '([^/]+)';
    const r = (method: string, path: string, auth: boolean, h: Handler) =>
      this.routes.push([method, new RegExp(`^${path.replaceAll('{}', S)}$`), auth, h]);
    const bot = () => ({ ...userObject(world.bot), verified: true, flags: 0 });
    const app = () => ({ id: world.applicationId, name: world.bot.username, description: '', bot_public: true, bot: bot(), flags: 0 });
    r('GET', '/gateway/bot', true, () => ({
      status: 200,
      body: {
        url: this.gatewayUrl(),
        shards: this.gatewayInfo.shards,
        session_start_limit: {
          total: this.gatewayInfo.sessionStartLimit.total,
          remaining: this.gatewayInfo.sessionStartLimit.remaining,
          reset_after: this.gatewayInfo.sessionStartLimit.resetAfterMs,
          max_concurrency: this.gatewayInfo.maxConcurrency,
        },
      },
    }));
    r('GET', '/gateway', false, () => ({ status: 200, body: { url: this.gatewayUrl() } }));
    r('GET', '/users/@me', true, () => ({ status: 200, body: bot() }));
    r('GET', '/oauth2/applications/@me', true, () => ({ status: 200, body: app() }));
    r('GET', '/applications/@me', true, () => ({ status: 200, body: app() }));
    r('PUT', '/applications/{}/commands', true, (c) => this.putCommands(c, 'global'));
    r('PUT', '/applications/{}/guilds/{}/commands', true, (c) => this.putCommands(c, c.params[1]!));
    r('GET', '/applications/{}/commands', true, () => ({ status: 200, body: this.store.commands.get('global') ?? [] }));
    r('GET', '/applications/{}/guilds/{}/commands', true, (c) => ({ status: 200, body: this.store.commands.get(c.params[1]!) ?? [] }));
    r('DELETE', '/applications/{}/commands/{}', true, (c) => this.deleteCommand('global', c.params[1]!));
    r('GET', '/channels/{}', true, (c) => this.withChannel(c, (ch) => ({ status: 200, body: channelObject(ch, world) })));
    r('POST', '/channels/{}/messages', true, (c) => this.withChannel(c, (ch) => this.createMessage(ch, c.json ?? {})));
    r('GET', '/channels/{}/messages', true, (c) => this.withChannel(c, (ch) => ({ status: 200, body: this.store.page(ch.id, c.query).map((m) => this.asRead(m)) })));
    r('GET', '/channels/{}/messages/{}', true, (c) =>
      this.withChannel(c, (ch) => {
        const m = this.store.findMessage(ch.id, c.params[1]!);
        return m ? { status: 200, body: this.asRead(m) } : err(404, 10008, 'Unknown Message');
      }),
    );
    r('POST', '/channels/{}/messages/bulk-delete', true, (c) => this.withChannel(c, (ch) => bulkDelete(ch, c.json ?? {}, this.store, this.hooks.bulkDeleted)));
    r('POST', '/channels/{}/typing', true, (c) => this.withChannel(c, (ch) => (this.botMayNotPost(ch) ? missingPermissions() : { status: 204 })));
    r('PUT', '/channels/{}/messages/{}/reactions/{}/@me', true, (c) => this.withChannel(c, (ch) => (ch.botMayNotReact ? missingPermissions() : { status: 204 })));
    r('POST', '/interactions/{}/{}/callback', false, (c) => this.callback(c));
    r('PATCH', '/webhooks/{}/{}/messages/@original', false, (c) => this.editOriginal(c));
    r('GET', '/webhooks/{}/{}/messages/@original', false, (c) => this.getOriginal(c));
    r('POST', '/webhooks/{}/{}', false, (c) => this.followup(c));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://emulator');
    const rawPath = url.pathname;
    const path = rawPath
      .replace(/^\/api(\/v10)?/, '')
      .split('/')
      .map((s) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return s;
        }
      })
      .join('/');
    let json: Json | undefined;
    try {
      json = body ? (JSON.parse(body) as Json) : undefined;
    } catch {
      json = undefined;
    }
    const method = req.method ?? 'GET';
    const reply = this.route(method, path, Object.fromEntries(url.searchParams), json, req.headers.authorization);
    this.store.calls.push({ method, path, rawPath, query: Object.fromEntries(url.searchParams), headers: { ...req.headers }, body, json, status: reply.status, at: Date.now() });
    // A held request (any route): its answer never comes (the client is killed meanwhile).
    if (this.store.holdRequest(`${method} ${path}`)) return this.hooks.changed();
    // A held create: the message is stored, its answer never comes (the client is killed meanwhile).
    const hold = method === 'POST' && reply.status === 200 && /^\/channels\/[^/]+\/messages$/.test(path) ? this.store.messageCreateHolds.findIndex((h) => h(json ?? {})) : -1;
    if (hold >= 0) {
      this.store.messageCreateHolds.splice(hold, 1);
      this.store.heldCreates.push(reply.body as Json);
      this.hooks.changed();
      return;
    }
    this.hooks.changed();
    if (reply.raw) {
      res.writeHead(reply.status, { 'content-type': reply.raw.contentType, ...reply.headers });
      res.end(reply.raw.text);
      return;
    }
    const headers: Record<string, string> = { ...(reply.body !== undefined ? { 'content-type': 'application/json' } : {}), ...reply.headers };
    res.writeHead(reply.status, headers);
    res.end(reply.body !== undefined ? JSON.stringify(reply.body) : undefined);
  }

  private route(method: string, path: string, query: Record<string, string>, json: Json | undefined, auth: string | undefined): Reply {
    for (const [m, re, needsAuth, handler] of this.routes) {
      const match = m === method ? re.exec(path) : null;
      if (!match) continue;
      if (needsAuth && auth !== `Bot ${this.token()}`) return err(401, 0, '401: Unauthorized');
      return handler({ method, path, query, json, params: match.slice(1) });
    }
    return err(404, 0, '404: Not Found');
  }

  private withChannel(c: Ctx, h: (ch: EmuChannel) => Reply): Reply {
    const ch = allChannels(this.world).find((x) => x.id === c.params[0]);
    const gone = placeRefusal(ch, this.store, this.world);
    if (gone || !ch) return gone!;
    if (this.store.noAccess.has(ch.id)) return err(403, 50001, 'Missing Access');
    return h(ch);
  }

  /**
   * A message as the bot may read it. Without the Message Content intent Discord blanks content,
   * embeds, attachments and components of guild messages in REST answers too (the message object
   * is the same), except the bot's own and those that mention it; a referenced message likewise.
   */
  private asRead(stored: Json): Json {
    // Discord keeps no nonce: only the create's answer and the gateway's MESSAGE_CREATE carry it.
    const { nonce: _nonce, ...m } = stored;
    if (this.hooks.messageContentAllowed() || m.guild_id === undefined) return m;
    const bot = this.world.bot.id;
    const exempt = m.author?.id === bot || (m.mentions as Json[] | undefined)?.some((u) => u.id === bot);
    const read: Json = exempt ? { ...m } : blankContent(m);
    if (m.referenced_message) read.referenced_message = this.asRead(m.referenced_message as Json);
    return read;
  }

  private putCommands(c: Ctx, scope: string): Reply {
    const fault = this.store.commandPutFaults.shift();
    if (fault) return faultReply(fault, 'emulator-commands-bucket');
    const list = Array.isArray(c.json) ? (c.json as Json[]) : [];
    // Context-menu commands (type 2 user, 3 message) take no description; names are 1–32 characters.
    const bad = list.find((cmd) => (cmd.type === 2 || cmd.type === 3) && ((cmd.description ?? '') !== '' || !/^.{1,32}$/u.test(String(cmd.name))));
    if (bad) return err(400, 50035, 'Invalid Form Body', { errors: { name: { _errors: [{ code: 'APPLICATION_COMMAND_INVALID', message: 'Invalid context menu command' }] } } });
    const saved = list.map((cmd) => ({ ...cmd, id: snowflake(), application_id: this.world.applicationId, version: snowflake(), type: cmd.type ?? 1 }));
    this.store.commands.set(scope, saved);
    return { status: 200, body: saved };
  }

  /** One command deleted by ID; Discord answers 404 with 10063 for an unknown one. */
  private deleteCommand(scope: string, id: string): Reply {
    const list = this.store.commands.get(scope) ?? [];
    if (!list.some((cmd) => cmd.id === id)) return err(404, 10063, 'Unknown application command');
    this.store.commands.set(scope, list.filter((cmd) => cmd.id !== id));
    return { status: 204 };
  }

  /** Discord's per-channel message bucket (5 per 5 s on real Discord), with its headers. */
  private channelBucket(ch: EmuChannel): Reply | Record<string, string> {
    const bucket = this.store.messageCreateBucket;
    if (!bucket) return {};
    const now = Date.now();
    let w = bucket.windows.get(ch.id);
    if (!w || now - w.start >= bucket.windowMs) bucket.windows.set(ch.id, (w = { start: now, used: 0 }));
    const resetAfter = (w.start + bucket.windowMs - now) / 1000;
    const headers = {
      'x-ratelimit-limit': String(bucket.limit),
      'x-ratelimit-remaining': String(Math.max(0, bucket.limit - w.used - 1)),
      'x-ratelimit-reset': String((w.start + bucket.windowMs) / 1000),
      'x-ratelimit-reset-after': String(resetAfter),
      'x-ratelimit-bucket': `emulator-channel-${ch.id}`,
    };
    if (w.used >= bucket.limit) {
      return {
        status: 429,
        body: { message: 'You are being rate limited.', retry_after: resetAfter, global: false },
        headers: { ...headers, 'retry-after': String(Math.ceil(resetAfter)), 'x-ratelimit-scope': 'user' },
      };
    }
    w.used += 1;
    return headers;
  }

  /** A permission overwrite on the channel (or a thread's parent) denies the bot Send Messages. */
  private botMayNotPost(ch: EmuChannel): boolean {
    const parent = ch.parentId ? allChannels(this.world).find((x) => x.id === ch.parentId) : undefined;
    return ch.botMayNotPost === true || parent?.botMayNotPost === true;
  }

  private createMessage(ch: EmuChannel, body: Json): Reply {
    if (this.botMayNotPost(ch)) return missingPermissions();
    const archived = archivedThreadPost(ch, (t) => this.hooks.threadUpdated(t));
    if (archived) return archived;
    const bucket = this.channelBucket(ch);
    if ('status' in bucket) return bucket as Reply;
    const created = this.createMessageInBucket(ch, body);
    return { ...created, headers: { ...(created.headers ?? {}), ...(bucket as Record<string, string>) } };
  }

  private createMessageInBucket(ch: EmuChannel, body: Json): Reply {
    const fault = this.store.messageCreateFaults.shift();
    if (fault) return faultReply(fault, 'emulator-message-bucket');
    const content = typeof body.content === 'string' ? body.content : '';
    if (content.length > 2000) {
      return err(400, 50035, 'Invalid Form Body', { errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } } });
    }
    if (!content.trim()) return err(400, 50006, 'Cannot send an empty message');
    const asked = createFlags(body);
    if ('refused' in asked) return asked.refused;
    const customIds = Array.isArray(body.components)
      ? (body.components as Json[]).flatMap((row) => (Array.isArray(row.components) ? (row.components as Json[]) : [])).map((c) => String(c.custom_id ?? ''))
      : [];
    if (customIds.some((id) => id.length === 0 || id.length > 100)) {
      return err(400, 50035, 'Invalid Form Body', { errors: { components: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 100 in length.' }] } } });
    }
    // Discord checks a nonce "for uniqueness in the past few minutes" only.
    const nonceKey = body.enforce_nonce && body.nonce !== undefined ? `${ch.id}:${String(body.nonce)}` : undefined;
    const earlier = nonceKey ? this.store.nonces.get(nonceKey) : undefined;
    if (earlier && Date.now() - earlier.at < this.gatewayInfo.nonceWindowMs) return { status: 200, body: earlier.message };
    const refId = body.message_reference?.message_id as string | undefined;
    if (refId && this.store.noReadHistory.has(ch.id)) return err(403, 160002, 'Cannot reply without permission to read message history');
    const referenced = refId ? this.store.findMessage(ch.id, refId) : undefined;
    if (refId && !referenced && body.message_reference?.fail_if_not_exists !== false) {
      return err(400, 50035, 'Invalid Form Body', { errors: { message_reference: { _errors: [{ code: 'REPLIES_UNKNOWN_MESSAGE', message: 'Unknown message' }] } } });
    }
    const allowed = body.allowed_mentions as Json | undefined;
    const parse: string[] = allowed ? (allowed.parse ?? []) : ['users', 'roles', 'everyone'];
    const pingReplied = referenced !== undefined && (allowed ? allowed.replied_user === true : true);
    const mentions = allUsers(this.world).filter(
      (u) => (parse.includes('users') && mentionedIds(content).includes(u.id)) || (pingReplied && u.id === referenced?.author?.id),
    );
    const message = messageObject({
      id: snowflake(),
      channel: ch,
      author: this.world.bot,
      // Discord keeps the content without the whitespace around it.
      content: content.trim(),
      world: this.world,
      mentions,
      mentionEveryone: parse.includes('everyone') && /@(everyone|here)/.test(content),
      ...(referenced ? { reference: { type: 0, message_id: referenced.id, channel_id: ch.id, ...(ch.guildId ? { guild_id: ch.guildId } : {}) }, referenced } : {}),
      ...(body.nonce !== undefined ? { nonce: String(body.nonce) } : {}),
      ...(Array.isArray(body.components) ? { components: body.components as Json[] } : {}),
      flags: asked.flags,
    });
    if (nonceKey) this.store.nonces.set(nonceKey, { message, at: Date.now() });
    this.hooks.botMessage(ch, message);
    return { status: 200, body: message };
  }

  private interaction(c: Ctx, byApp: boolean) {
    const found = byApp
      ? [...this.store.interactions.values()].find((i) => i.token === c.params[1] && c.params[0] === this.world.applicationId)
      : this.store.interactions.get(c.params[0]!);
    return found && found.token === c.params[1] ? found : undefined;
  }

  private callback(c: Ctx): Reply {
    const i = this.interaction(c, false);
    if (!i) return err(404, 10062, 'Unknown interaction');
    // Discord shows "The application did not respond" and forgets the interaction after 3 s.
    if (Date.now() - i.createdAt > this.gatewayInfo.interactionAckMs) {
      i.late.push({ kind: 'callback', type: Number(c.json?.type) });
      return err(404, 10062, 'Unknown interaction');
    }
    if (i.responses.some((r) => r.kind === 'callback')) return err(400, 40060, 'Interaction has already been acknowledged.');
    const type = Number(c.json?.type);
    const data = (c.json?.data ?? {}) as Json;
    i.responses.push({ kind: 'callback', type, data });
    if (type === 4) i.original = { content: String(data.content ?? ''), flags: Number(data.flags ?? 0) };
    if (type === 5) i.original = { content: '', flags: Number(data.flags ?? 0) };
    if (c.query.with_response !== 'true') return { status: 204 };
    return { status: 200, body: { interaction: { id: i.id, type: i.payload.type }, resource: { type } } };
  }

  /** An interaction token is good for 15 minutes (edits, follow-ups). */
  private tokenExpired(i: { createdAt: number; late: Array<{ kind: string }> }): boolean {
    if (Date.now() - i.createdAt <= this.gatewayInfo.interactionTokenMs) return false;
    i.late.push({ kind: 'webhook' });
    return true;
  }

  private webhookMessage(i: { payload: Json }, content: string, flags: number): Json {
    const ch = allChannels(this.world).find((x) => x.id === i.payload.channel_id) ?? { id: String(i.payload.channel_id), type: 0 };
    return { ...messageObject({ id: snowflake(), channel: ch, author: this.world.bot, content, world: this.world, mentions: [] }), flags, webhook_id: this.world.applicationId, application_id: this.world.applicationId };
  }

  private editOriginal(c: Ctx): Reply {
    const i = this.interaction(c, true);
    if (i && this.tokenExpired(i)) return err(401, 50027, 'Invalid Webhook Token');
    if (!i || !i.original) return err(404, 10008, 'Unknown Message');
    const data = c.json ?? {};
    i.original = { content: String(data.content ?? i.original.content), flags: i.original.flags };
    i.responses.push({ kind: 'edit-original', data });
    return { status: 200, body: this.webhookMessage(i, i.original.content, i.original.flags) };
  }

  private getOriginal(c: Ctx): Reply {
    const i = this.interaction(c, true);
    if (i && this.tokenExpired(i)) return err(401, 50027, 'Invalid Webhook Token');
    if (!i || !i.original) return err(404, 10008, 'Unknown Message');
    return { status: 200, body: this.webhookMessage(i, i.original.content, i.original.flags) };
  }

  private followup(c: Ctx): Reply {
    const i = this.interaction(c, true);
    if (i && this.tokenExpired(i)) return err(401, 50027, 'Invalid Webhook Token');
    if (!i) return err(404, 10015, 'Unknown Webhook');
    const data = c.json ?? {};
    const followup = { content: String(data.content ?? ''), flags: Number(data.flags ?? 0) };
    i.followups.push(followup);
    i.responses.push({ kind: 'followup', data });
    return { status: 200, body: this.webhookMessage(i, followup.content, followup.flags) };
  }
}

/** A queued fault as Discord sends it: a 429 with real rate-limit headers, or a bare 5xx. */
function faultReply(fault: Fault, bucket: string): Reply {
  if (fault.status !== 429) return err(fault.status, 0, 'Internal Server Error');
  if ('edge' in fault) return { status: 429, raw: { text: '<!DOCTYPE html><html><body>error code: 1015</body></html>', contentType: 'text/html; charset=UTF-8' } };
  const s = fault.retryAfterSeconds;
  return {
    status: 429,
    body: { message: 'You are being rate limited.', retry_after: s, global: fault.global ?? false },
    headers: {
      'retry-after': String(Math.ceil(s)),
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Date.now() / 1000 + s),
      'x-ratelimit-reset-after': String(s),
      'x-ratelimit-bucket': bucket,
      'x-ratelimit-scope': 'user',
      ...(fault.global ? { 'x-ratelimit-global': 'true' } : {}),
    },
  };
}

function missingPermissions(): Reply {
  return err(403, 50013, 'Missing Permissions');
}
