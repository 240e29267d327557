import { Events, type Client, type Message } from 'discord.js';
import { errorFields } from '../../src/logger.js';
import { withTimeout } from '../../src/core/with-timeout.js';
import { discordConfigOf } from './config.js';
import type { Adapter } from '../../src/core/adapter.js';
import type { AdapterContext } from '../../src/core/platform-context.js';
import { createInteractionHandler } from './commands/interactions.js';
import { registerCommands } from './commands/register.js';
import { DISALLOWED_INTENTS_CLOSE, DisallowedIntentsError, createGatewayClient, loginAndWait, type ShardPlan } from './gateway.js';
import { RedisIdentifyThrottler } from './identify-throttler.js';
import { createRest } from './rest.js';
import { ShardStates } from './shard-states.js';
import { Routes, type RESTGetAPIGatewayBotResult } from 'discord-api-types/v10';
import { normaliseMessage } from './normalise-message.js';
import { withAttachments } from './attachments.js';
import type { FeedbackRecorder } from './feedback/click.js';
import { createFeedbackStore } from '../../src/feedback/index.js';
import { bullPrefix } from '../../src/redis.js';
import type { IncomingMessage } from '../../src/core/message.js';
import { KeyedSerial } from './serial.js';

/** A replied-to message not in the cache is fetched; past this it counts as not the bot's. */
const REFERENCE_LOOKUP_MS = 3_000;

export const MESSAGE_CONTENT_WARNING =
  'Discord refused the Message Content intent (gateway close 4014), so the bot runs in mention-only mode: ' +
  'it answers messages that mention it, DMs, and replies that ping it, and cannot read other channel messages. ' +
  'To enable it: Discord Developer Portal → your application → Bot → Privileged Gateway Intents → ' +
  'turn on "Message Content Intent", save, and restart agent-bridge.';

export interface DiscordAdapter extends Adapter {
  /** True when the Message Content intent was refused and only mentions carry text. */
  readonly mentionOnly: boolean;
  /** The connected client (for tests and diagnostics). */
  readonly client: Client | undefined;
  /** The shards this process runs ('auto' until connected when not configured). */
  readonly shardPlan: ShardPlan | undefined;
  /** Per-shard connection state, for /readyz. */
  readiness(): { ok: boolean; detail: Record<string, unknown> };
}


/** Room kept for the "<author> wrote:" line an asked message gets. */
const ASK_PREFIX_ROOM = 100;

/** The feedback store, once the composition root provides one (h6's src/feedback). */
type DiscordAdapterContext = AdapterContext & { feedback?: FeedbackRecorder };

/**
 * Discord ingress: one gateway connection that normalises messages into `ingress.handle` and
 * answers `/agent` interactions. Replies are posted by workers through the reply port.
 */
export function createDiscordAdapter(ctx: DiscordAdapterContext, options: { feedback?: FeedbackRecorder } = {}): DiscordAdapter {
  const discord = discordConfigOf(ctx.config);
  if (!discord) throw new Error('DISCORD_TOKEN is missing: the Discord adapter needs the bot token');
  const logger = ctx.logger;
  // The composition root's store when it has one; else the same store over the shared Redis.
  const feedback =
    options.feedback ??
    ctx.feedback ??
    createFeedbackStore({
      redis: ctx.redis,
      prefix: `${bullPrefix(ctx.config)}:chat`,
      maxEntries: ctx.config.feedbackMaxEntries,
      ...(ctx.metrics ? { registry: ctx.metrics.registry } : {}),
    });
  const limits = { maxBytes: ctx.config.maxAttachmentBytes, maxChars: ctx.config.maxMessageChars };
  const onInteraction = createInteractionHandler({
    commands: ctx.commands,
    secrets: ctx.secrets,
    logger,
    adminRoleIds: discord.adminRoleIds,
    ask: {
      ingress: ctx.ingress,
      bindings: ctx.bindings,
      withAttachments: (m, source) => withAttachments(m, source, { ...limits, maxChars: Math.max(0, limits.maxChars - ASK_PREFIX_ROOM) }),
    },
    feedback: { feedback, bindings: ctx.bindings },
  });

  /** Files are downloaded only for messages the bot may answer, not for every chat line. */
  async function mayAnswer(m: IncomingMessage): Promise<boolean> {
    if (m.fromSelf || m.fromBot) return false;
    if (m.isDirect || m.mentionsBot || m.repliesToBot) return true;
    const binding = await ctx.bindings.get('discord', m.bindingChannelId);
    // A thread of a bound channel may be a follow-up the bot answers without a mention.
    return binding !== undefined && (binding.mode === 'all' || m.conversation.threadId !== undefined);
  }
  const serial = new KeyedSerial();
  const shardStates = new ShardStates(ctx.metrics?.registry);
  let plan: ShardPlan | undefined;
  let client: Client | undefined;
  let contentIntent = true;
  let warned = false;
  let starting: Promise<void> | undefined;
  let stopped = false;

  async function onMessage(message: Message, withContent: boolean): Promise<void> {
    const botUserId = message.client.user?.id;
    if (!botUserId) return;
    let incoming = await normaliseMessage(message, {
      botUserId,
      allowBots: discord!.allowBots,
      contentIntent: withContent,
      repliedAuthor: async (m) => (await withTimeout(m.fetchReference(), REFERENCE_LOOKUP_MS, () => undefined))?.author.id,
    });
    if (!incoming) {
      logger.debug({ messageId: message.id, type: message.type }, 'discord system message ignored');
      return;
    }
    let notice: string | undefined;
    if (message.attachments.size > 0 && (await mayAnswer(incoming))) {
      ({ message: incoming, notice } = await withAttachments(incoming, message, limits));
    }
    const result = await ctx.ingress.handle(incoming);
    logger.debug({ messageId: message.id, status: result.status }, 'discord message handled');
    if (notice && result.status === 'queued') {
      // Not awaited: this channel's next message must not wait for the notice's post.
      void ctx.replyPort.postNotice(incoming.reply, notice).catch((err: unknown) => logger.warn({ ...errorFields(err) }, 'could not post the files notice'));
    }
  }

  function warnMentionOnly(): void {
    contentIntent = false;
    if (warned) return;
    warned = true;
    logger.warn(MESSAGE_CONTENT_WARNING);
  }

  /**
   * The shards to run. Not configured: discord.js's 'auto' (all of them, Discord's count). With
   * DISCORD_SHARD_IDS and/or DISCORD_SHARD_COUNT: those IDs (all when unset) of that count
   * (Discord's recommendation for `auto`), identified through the Redis-shared throttler.
   */
  async function resolvePlan(): Promise<ShardPlan> {
    const { ids, count } = discord!.shards;
    if (!ids && count === 'auto') return 'auto';
    const total = count === 'auto' ? ((await createRest(discord!).get(Routes.gatewayBot())) as RESTGetAPIGatewayBotResult).shards : count;
    const beyond = ids?.find((id) => id >= total);
    if (beyond !== undefined) {
      throw new Error(
        `DISCORD_SHARD_IDS lists shard ${beyond} but Discord recommends ${total} shards: set DISCORD_SHARD_COUNT to the count every process uses`,
      );
    }
    return { ids: ids ?? Array.from({ length: total }, (_, i) => i), count: total };
  }

  async function connect(withContent: boolean): Promise<Client> {
    plan ??= await resolvePlan();
    const shared = plan !== 'auto';
    const c = createGatewayClient(discord!, withContent, {
      shards: plan,
      ...(shared
        ? { identifyThrottler: (max: number) => new RedisIdentifyThrottler(ctx.redis, `${ctx.config.queue.prefix}:discord:identify`, max) }
        : {}),
    });
    let wasReady = false;
    c.on(Events.ShardReady, (shardId) => shardStates.set(shardId, true));
    c.on(Events.ShardResume, (shardId) => shardStates.set(shardId, true));
    c.on(Events.ShardReconnecting, (shardId) => shardStates.set(shardId, false));
    c.on(Events.ShardDisconnect, (_event, shardId) => shardStates.set(shardId, false));
    c.on(Events.MessageCreate, (message) => {
      void serial
        .run(message.channelId, () => onMessage(message, withContent))
        .catch((err: unknown) => logger.error({ ...errorFields(err), messageId: message.id }, 'discord message handling failed'));
    });
    c.on(Events.InteractionCreate, (interaction) => void onInteraction(interaction));
    c.on(Events.Error, (err) => logger.error({ ...errorFields(err) }, 'discord client error'));
    c.on(Events.Warn, (message) => logger.warn({ detail: message }, 'discord client warning'));
    c.on(Events.ShardError, (err, shardId) => logger.warn({ ...errorFields(err), shardId }, 'discord gateway connection error'));
    c.on(Events.ShardResume, (shardId, replayed) => logger.info({ shardId, replayed }, 'discord gateway resumed'));
    c.on(Events.ShardReconnecting, (shardId) => {
      if (!stopped) logger.info({ shardId }, 'discord gateway reconnecting');
    });
    c.on(Events.ShardDisconnect, (event, shardId) => {
      if (stopped) return;
      logger.warn({ code: event.code, shardId }, 'discord gateway closed for good');
      // A 4014 after start-up (on a re-identify): carry on without the intent.
      if (wasReady && event.code === DISALLOWED_INTENTS_CLOSE && withContent && !stopped) {
        warnMentionOnly();
        void reconnect().catch((err: unknown) => logger.error({ ...errorFields(err) }, 'discord reconnect without Message Content failed'));
      }
    });
    await loginAndWait(c, discord!.token);
    wasReady = true;
    return c;
  }

  async function reconnect(): Promise<void> {
    const old = client;
    client = undefined;
    await old?.destroy();
    if (stopped) return;
    client = await connect(false);
  }

  async function start(): Promise<void> {
    try {
      client = await connect(true);
    } catch (err) {
      if (!(err instanceof DisallowedIntentsError)) throw err;
      warnMentionOnly();
      client = await connect(false);
    }
    if (stopped) {
      await client.destroy();
      return;
    }
    const shards = plan === 'auto' ? client.options.shards : plan?.ids;
    logger.info(
      { user: client.user?.tag, guilds: client.guilds.cache.size, mentionOnly: !contentIntent, shards, shardCount: client.options.shardCount },
      'discord connected',
    );
    // Commands are the application's, not a shard's: only the process holding shard 0 registers them.
    if (plan !== 'auto' && plan && !plan.ids.includes(0)) {
      logger.info('discord commands left to the process holding shard 0');
      return;
    }
    try {
      const applicationId = client.application?.id ?? client.user?.id;
      const result = await registerCommands(client.rest, { applicationId, guildId: discord!.guildId });
      logger.info(result, 'discord /agent command registered');
    } catch (err) {
      logger.error({ ...errorFields(err) }, 'discord /agent command registration failed: run `npm run register-commands` to retry');
    }
  }

  return {
    platform: 'discord',
    get mentionOnly() {
      return !contentIntent;
    },
    get client() {
      return client;
    },
    get shardPlan() {
      return plan;
    },
    readiness() {
      const expected = plan === 'auto' ? (Array.isArray(client?.options.shards) ? client.options.shards : []) : (plan?.ids ?? []);
      return shardStates.readiness(expected);
    },
    start() {
      starting ??= start();
      return starting;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await starting?.catch(() => {});
      const c = client;
      client = undefined;
      await c?.destroy();
      await serial.idle();
      shardStates.clear();
    },
  };
}
