import { setTimeout as sleep } from 'node:timers/promises';
import { Events, type Client } from 'discord.js';
import { errorFields } from '../../src/logger.js';
import { discordConfigOf } from './config.js';
import type { Adapter } from '../../src/core/adapter.js';
import type { AdapterContext } from '../../src/core/platform-context.js';
import { createInteractionHandler } from './commands/interactions.js';
import { registerCommands } from './commands/register.js';
import { DISALLOWED_INTENTS_CLOSE, DisallowedIntentsError, createGatewayClient, definitiveCloseReason, loginAndWait, startFailure, type ShardPlan, type StartFailure } from './gateway.js';
import { sessionLimitWaitMs } from './session-limit.js';
import { agreeShardCount } from './shard-count.js';
import { RedisIdentifyThrottler } from './identify-throttler.js';
import { createRest } from './rest.js';
import { ShardStates } from './shard-states.js';
import { ReconnectLog } from './reconnect-log.js';
import { Routes, type RESTGetAPIGatewayBotResult } from 'discord-api-types/v10';
import { withAttachments } from './attachments.js';
import type { FeedbackRecorder } from './feedback/click.js';
import { createFeedbackStore } from '../../src/feedback/index.js';
import { bullPrefix } from '../../src/redis.js';
import { KeyedSerial } from './serial.js';
import { createMessageIntake } from './message-intake.js';
import { createMessageEdit } from './message-edit.js';
import { createUncachedChannelEdit } from './uncached-channel-edit.js';
import type { RawPacket } from './gateway-sessions.js';
import { createSessionHandover } from './session-handover.js';
import { createChangeSettled } from './change-settled.js';
import { GonePlaces } from './gone-places.js';
import { createPlaceEvents } from './place-events.js';

/** Pauses between start-up attempts while Discord is unreachable: doubling from `firstMs` to `maxMs`. */
export interface StartRetry {
  firstMs: number;
  maxMs: number;
}

const START_RETRY: StartRetry = { firstMs: 1_000, maxMs: 30_000 };

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
  /**
   * Command registration under way in the background, settled once it succeeded or failed (and
   * logged it); undefined before connecting or when another process registers (for tests).
   */
  readonly commandRegistration: Promise<void> | undefined;
}


/** Room kept for the "<author> wrote:" line an asked message gets. */
const ASK_PREFIX_ROOM = 100;

/** The feedback store, once the composition root provides one (h6's src/feedback). */
type DiscordAdapterContext = AdapterContext & { feedback?: FeedbackRecorder };

/**
 * Discord ingress: one gateway connection that normalises messages into `ingress.handle` and
 * answers `/agent` interactions. Replies are posted by workers through the reply port.
 */
export function createDiscordAdapter(
  ctx: DiscordAdapterContext,
  options: {
    feedback?: FeedbackRecorder;
    startRetry?: StartRetry;
    /** How often a shard still reconnecting is reported again. @defaultValue 60 s */
    stillDownEveryMs?: number;
  } = {},
): DiscordAdapter {
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
    mentionOnly: () => !contentIntent,
  });

  const onMessage = createMessageIntake({ ctx, allowBots: discord.allowBots, limits });
  const onEdit = createMessageEdit({ ctx, allowBots: discord.allowBots, limits });
  const serial = new KeyedSerial();
  const onChange = createChangeSettled({ serial, track: (shardId, s, done) => handover.trackChange(shardId, s, done) });
  const onPlaceEvent = createPlaceEvents({ ctx, gone: new GonePlaces(ctx.redis, ctx.config.queue.prefix), serial });
  const shardStates = new ShardStates(ctx.metrics?.registry);
  const reconnects = new ReconnectLog(logger, options.stillDownEveryMs);
  let plan: ShardPlan | undefined;
  let client: Client | undefined;
  let contentIntent = true;
  let warned = false;
  let starting: Promise<void> | undefined;
  /** Start-up attempts after the first, made in the background while Discord is unreachable. */
  let retrying: Promise<void> | undefined;
  /** Why Discord is not connected yet, for /readyz: still retrying, or given up on a setting. */
  let startProblem: 'retrying' | 'failed' | undefined;
  let stopped = false;
  /** Ends this process's renewal of the fleet's shard count (see shard-count.ts). */
  let stopRenewingShardCount: (() => void) | undefined;
  const halt = new AbortController();
  let commandRegistration: Promise<void> | undefined;
  /** Sessions kept resumable across restarts, and caught up on by the next process. */
  const handover = createSessionHandover({ redis: ctx.redis, prefix: ctx.config.queue.prefix, token: discord.token, logger, signal: halt.signal });

  function warnMentionOnly(): void {
    contentIntent = false;
    if (warned) return;
    warned = true;
    logger.warn(MESSAGE_CONTENT_WARNING);
  }

  /**
   * The shards to run. Not configured: discord.js's 'auto' (all of them, Discord's count). With
   * DISCORD_SHARD_IDS: those IDs of the count the fleet agreed on in Redis (see shard-count.ts),
   * identified through the Redis-shared throttler. DISCORD_SHARD_COUNT alone: all shards of it.
   */
  async function resolvePlan(): Promise<ShardPlan> {
    const { ids, count } = discord!.shards;
    if (!ids) return count === 'auto' ? 'auto' : { ids: Array.from({ length: count }, (_, i) => i), count };
    const recommended = async () => ((await createRest(discord!).get(Routes.gatewayBot())) as RESTGetAPIGatewayBotResult).shards;
    const key = `${ctx.config.queue.prefix}:discord:shard-count`;
    const agreed = await agreeShardCount({ redis: ctx.redis, key, configured: count, ids, recommended, logger });
    stopRenewingShardCount = agreed.stopRenewing;
    const total = agreed.count;
    const beyond = ids.find((id) => id >= total);
    if (beyond !== undefined) {
      throw new Error(
        `DISCORD_SHARD_IDS lists shard ${beyond} but the shard count is ${total}: set DISCORD_SHARD_COUNT to the count every process uses`,
      );
    }
    return { ids, count: total };
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
    const onUncachedChannelEdit = createUncachedChannelEdit({ logger, serial, onEdit: (updated) => onEdit(undefined, updated, withContent) });
    c.on(Events.ShardReady, (shardId) => shardStates.set(shardId, true));
    c.on(Events.ShardResume, (shardId) => shardStates.set(shardId, true));
    c.on(Events.ShardReconnecting, (shardId) => shardStates.set(shardId, false));
    c.on(Events.ShardDisconnect, (_event, shardId) => shardStates.set(shardId, false));
    (c as unknown as NodeJS.EventEmitter).on(Events.Raw, (packet: RawPacket, shardId: number) => {
      handover.onPacket(packet, shardId, c.options.shardCount ?? 1);
      onPlaceEvent(packet, c);
      onUncachedChannelEdit(packet, c);
      onChange(packet, shardId, c);
    });
    c.on(Events.MessageCreate, (message) => {
      const done = serial
        .run(message.channelId, () => onMessage(message, withContent))
        .catch((err: unknown) => logger.error({ ...errorFields(err), messageId: message.id }, 'discord message handling failed'));
      handover.track(message.id, done);
    });
    // An edit is handled after its message's create (same channel, in order).
    c.on(Events.MessageUpdate, (old, updated) => {
      void serial
        .run(updated.channelId, () => onEdit(old, updated, withContent))
        .catch((err: unknown) => logger.warn({ ...errorFields(err), messageId: updated.id }, 'discord message edit handling failed'));
    });
    c.on(Events.InteractionCreate, (interaction) => void onInteraction(interaction));
    c.on(Events.Error, (err) => logger.error({ ...errorFields(err) }, 'discord client error'));
    c.on(Events.Warn, (message) => logger.warn({ detail: message }, 'discord client warning'));
    c.on(Events.ShardError, (err, shardId) => logger.warn({ ...errorFields(err), shardId }, 'discord gateway connection error'));
    c.on(Events.ShardResume, (shardId, replayed) => logger.info({ shardId, replayed }, 'discord gateway resumed'));
    c.on(Events.ShardReconnecting, (shardId) => {
      if (!stopped) reconnects.reconnecting(shardId);
    });
    c.on(Events.ShardReady, (shardId) => reconnects.back(shardId));
    c.on(Events.ShardResume, (shardId) => reconnects.back(shardId));
    c.on(Events.ShardDisconnect, (event, shardId) => {
      if (stopped) return;
      // discord.js does not reconnect after these codes: say what to fix (a token reset in the portal: 4004).
      const fix = wasReady ? definitiveCloseReason(event.code) : undefined;
      if (fix) logger.error({ code: event.code, shardId }, `discord gateway closed for good, this shard receives nothing until agent-bridge is restarted: ${fix}`);
      else logger.warn({ code: event.code, shardId }, 'discord gateway closed for good');
      if (wasReady && !(event.code === DISALLOWED_INTENTS_CLOSE && withContent)) {
        shardStates.closedForGood(shardId, fix ?? `Discord closed the gateway with ${event.code}; restart agent-bridge`);
      }
      // A 4014 after start-up (on a re-identify): carry on without the intent.
      if (wasReady && event.code === DISALLOWED_INTENTS_CLOSE && withContent && !stopped) {
        warnMentionOnly();
        void reconnect().catch((err: unknown) => logger.error({ ...errorFields(err) }, 'discord reconnect without Message Content failed'));
      }
    });
    await loginAndWait(c, discord!.token);
    wasReady = true;
    // Edits and deletions a catch-up replays take the live path (catch-up.ts).
    handover.setClient(c, {
      raw: (packet) => {
        onPlaceEvent(packet, c);
        onUncachedChannelEdit(packet, c);
      },
      settled: (channelId) => serial.run(channelId, async () => {}),
    });
    return c;
  }

  async function reconnect(): Promise<void> {
    const old = client;
    client = undefined;
    handover.setClient(undefined);
    // Its sessions stay resumable: the new client catches up on what they got meanwhile.
    if (old) await handover.replace(old);
    if (stopped) return;
    client = await connect(false);
  }

  /** One attempt: with the Message Content intent while Discord grants it, else without. */
  async function connectOnce(): Promise<Client> {
    try {
      return await connect(contentIntent);
    } catch (err) {
      if (!(err instanceof DisallowedIntentsError) || !contentIntent) throw err;
      warnMentionOnly();
      return connect(false);
    }
  }

  /**
   * Only the first attempt is waited for. A Discord outage then leaves start-up to go on (Slack
   * and the HTTP server must not wait for Discord) and attempts continue in the background;
   * a token or a setting Discord refuses stops start-up at once.
   */
  async function start(): Promise<void> {
    try {
      client = await connectOnce();
    } catch (err) {
      const failure = startFailure(err, discord!);
      if (!failure.retry) throw failure.error;
      startProblem = 'retrying';
      retrying = keepConnecting(failure).catch((e: unknown) => logger.error({ ...errorFields(e) }, 'discord start-up failed'));
      return;
    }
    await connected(client);
  }

  async function keepConnecting(first: StartFailure & { retry: true }): Promise<void> {
    const retry = options.startRetry ?? START_RETRY;
    let failure = first;
    let backoffMs = retry.firstMs;
    let sessionLimitWarned = false;
    for (;;) {
      // Before the daily session-start limit resets, trying cannot succeed (discord.js refuses to connect).
      const delayMs = failure.sessionLimit ? sessionLimitWaitMs(failure.sessionLimit) : backoffMs;
      const line = `${failure.reason}; Discord connect retried in ${delayMs / 1000} s, agent-bridge runs without Discord meanwhile`;
      if (failure.sessionLimit) {
        // One warning: the re-checks until the reset (every few minutes, for hours) are routine.
        logger[sessionLimitWarned ? 'info' : 'warn']({ retryInMs: delayMs, resetsAt: failure.sessionLimit.resetsAt?.toISOString() }, line);
        sessionLimitWarned = true;
      } else {
        backoffMs = Math.min(backoffMs * 2, retry.maxMs);
        logger.warn({ retryInMs: delayMs }, line);
      }
      const waited = await sleep(delayMs, undefined, { signal: halt.signal }).then(
        () => true,
        () => false,
      );
      if (!waited || stopped) return;
      try {
        client = await connectOnce();
        break;
      } catch (err) {
        const next = startFailure(err, discord!);
        if (!next.retry) {
          // Too late to stop start-up: say what to fix, and /readyz stays not ready.
          startProblem = 'failed';
          logger.error({ ...errorFields(next.error) }, `discord start-up failed: ${next.error.message}`);
          return;
        }
        failure = next;
      }
    }
    startProblem = undefined;
    await connected(client);
  }

  /** Logs the connection and starts registering the commands, unless the bridge stopped meanwhile. */
  async function connected(c: Client): Promise<void> {
    if (stopped) {
      client = undefined;
      await c.destroy();
      return;
    }
    const shards = plan === 'auto' ? c.options.shards : plan?.ids;
    logger.info(
      { user: c.user?.tag, guilds: c.guilds.cache.size, mentionOnly: !contentIntent, shards, shardCount: c.options.shardCount },
      'discord connected',
    );
    // Commands are the application's, not a shard's: only the process holding shard 0 registers them.
    if (plan !== 'auto' && plan && !plan.ids.includes(0)) {
      logger.info('discord commands left to the process holding shard 0');
      return;
    }
    // Not awaited: a 429 on the commands PUT is waited out inside the REST client, for as long as
    // Discord's retry_after says (minutes, near the daily create cap); start-up must not wait with it.
    commandRegistration = registerInBackground(c);
  }

  async function registerInBackground(c: Client): Promise<void> {
    try {
      const applicationId = c.application?.id ?? c.user?.id;
      const result = await registerCommands(c.rest, { applicationId, guildId: discord!.guildId, signal: halt.signal });
      logger.info(result, 'discord /agent command registered');
    } catch (err) {
      // Stopped meanwhile: the request was abandoned on purpose.
      if (stopped) return;
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
    get commandRegistration() {
      return commandRegistration;
    },
    readiness() {
      const expected = plan === 'auto' ? (Array.isArray(client?.options.shards) ? client.options.shards : []) : (plan?.ids ?? []);
      const shards = shardStates.readiness(expected);
      return startProblem ? { ok: false, detail: { ...shards.detail, connection: startProblem } } : shards;
    },
    start() {
      starting ??= start();
      return starting;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // Also abandons a command registration waiting out a 429 (not awaited: it may wait minutes).
      halt.abort();
      stopRenewingShardCount?.();
      await starting?.catch(() => {});
      await retrying;
      const c = client;
      client = undefined;
      // The sessions stay resumable, their last handled message recorded (session-handover.ts).
      await handover.stop(c, () => serial.idle());
      await c?.destroy();
      shardStates.clear();
    },
  };
}
