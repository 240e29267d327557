import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { createAgentApi } from './agent-api/client.js';
import type { AgentApi, AgentCallEvent } from './agent-api/types.js';
import { createAccountStore, type AgentAccount } from './accounts/account-store.js';
import { perWorkspaceAccounts, sharedAccount, type AgentAccounts } from './accounts/agent-accounts.js';
import { createSealedBox } from './crypto/sealed-box.js';
import { fingerprintsFor } from './crypto/credential-fingerprints.js';
import { createSuggestedPromptStore } from './prompts/suggested-prompts.js';
import { createFeedbackStore } from './feedback/index.js';
import { createAuditLog } from './audit/audit-log.js';
import { createCachedBindingStore } from './bindings/cache.js';
import { createBindingStore } from './bindings/store.js';
import type { BindingStore } from './bindings/types.js';
import { createCommands } from './commands/handlers.js';
import type { Commands } from './commands/types.js';
import type { Config } from './config/load.js';
import type { Adapter } from './core/adapter.js';
import { encodeConversationId, type Platform } from './core/conversation.js';
import { newReference } from './core/reference.js';
import type { PlatformModule, QueueInfo, PlatformVocabulary } from './core/platform-context.js';
import type { ReplyPorts } from './core/reply-port.js';
import { withTimeout } from './core/with-timeout.js';
import { createDropLog } from './diagnostics/drop-log.js';
import { mountDashboard } from './http/dashboard.js';
import { createHttpServer } from './http/server.js';
import { createIngress } from './ingress/ingress.js';
import { createEditedMessages } from './ingress/edited-message.js';
import { createSeenLedger } from './ingress/seen-ledger.js';
import { DEFAULT_VOCABULARY } from './ingress/notices.js';
import { createInstanceLabel, learnInstancesFrom } from './instance-label.js';
import type { Ingress } from './ingress/types.js';
import { createLogger, secrets as processSecrets, type Logger, type SecretRegistry, errorFields } from './logger.js';
import { Metrics } from './metrics.js';
import { MessageEnds } from './diagnostics/message-ends.js';
import { ChatQueue } from './queue/chat-queue.js';
import { createQuota } from './quota/quota.js';
import { bullPrefix, createRedis } from './redis.js';
import { queueKeys } from './queue/keys.js';
import { evictionPolicyProblem, noteDataLoss, RedisUnavailableError, waitForRedis, watchAuthRefusal } from './redis-startup.js';
import { isRedisConnectionError } from './redis-errors.js';
import { logRedisOutages } from './redis-outage-log.js';
import { listenProblem } from './http/listen-problem.js';
import { assertWorkerCoversIngress, keepAnnouncing } from './worker/platform-coverage.js';
import type { PlatformSettings } from './config/platform-settings.js';
import { agentReadiness, checkAgentAtStartUp, listingCredential } from './agent-api/reachability.js';
import { startChatWorker, type ChatWorker } from './worker/chat-worker.js';
import { FailureLog } from './diagnostics/failure-log.js';
import { MessageProcessor } from './worker/process-message.js';

export interface BridgeOptions {
  config: Readonly<Config>;
  logger?: Logger;
  secrets?: SecretRegistry;
  /** The agent service client; defaults to the HTTP client of `config.agent`. */
  agentApi?: AgentApi;
  /** Per-workspace mode: the client of one workspace's account; defaults to the HTTP client with its key. */
  agentApiFor?: (account: AgentAccount) => AgentApi;
  /** The platforms to run (bin/platforms.ts picks them from config). */
  platforms: PlatformModule[];
  /**
   * Every platform's settings module (bin/platforms.ts): a worker refuses to start while an
   * ingress serves one that needs a token it lacks, and names it. @defaultValue none: no check
   */
  platformSettings?: readonly PlatformSettings[];
  metrics?: Metrics;
}

export interface Bridge {
  config: Readonly<Config>;
  ingress: Ingress;
  commands: Commands;
  ports: ReplyPorts;
  bindings: BindingStore;
  queue: ChatQueue;
  queueInfo: QueueInfo;
  redis: Redis;
  http: Express;
  httpPort: number;
  metrics: Metrics;
  /** Orderly and idempotent: stop ingress, drain workers (bounded), close HTTP and Redis. */
  stop(): Promise<void>;
}

/** The composition root: the only place real parts are wired together. */
export async function startBridge(options: BridgeOptions): Promise<Bridge> {
  const { config } = options;
  const secrets = options.secrets ?? processSecrets;
  for (const s of config.secrets) secrets.add(s);
  const logger = options.logger ?? createLogger({ level: config.logLevel, registry: secrets });
  const metrics = options.metrics ?? new Metrics({ defaultMetrics: true });
  const prefix = bullPrefix(config);
  const storePrefix = `${prefix}:chat`;

  // A Cluster client speaks the same commands; the stores are typed against the plain client.
  const redis = createRedis(config.redis, { name: 'agent-bridge' }) as Redis;
  const dataMark = queueKeys(storePrefix).dataMark;
  // One line when Redis goes away and one when it is back; data lost meanwhile is noted.
  const outages = logRedisOutages(redis, logger, () => void noteDataLoss(redis, dataMark, logger).catch(() => {}));
  await waitForRedis(redis, config.redis);
  watchAuthRefusal(redis, config.redis, logger);
  await redis.set(dataMark, String(Date.now())).catch(() => {});
  const eviction = await evictionPolicyProblem(redis).catch(() => undefined);
  if (eviction) logger.warn({ maxmemoryPolicy: eviction.policy }, eviction.words);
  const ownPlatforms = options.platforms.map((p) => p.platform);
  // A worker takes every platform's jobs: one that cannot answer a platform an ingress serves must not start.
  if (config.role === 'worker' && options.platformSettings) {
    await assertWorkerCoversIngress(redis, storePrefix, ownPlatforms, options.platformSettings).catch((err: unknown) => {
      outages.quiet();
      redis.disconnect();
      throw err;
    });
  }

  if (!options.agentApi && !config.agent) throw new Error('no agent service configured');
  // Metric labels name only instances the service listed; anything typed by hand is `other`.
  const instanceLabel = createInstanceLabel();
  const clientOptions = {
    logger,
    onCall: (e: AgentCallEvent) => {
      const labels = { endpoint: e.operation, agent_instance: instanceLabel.label(e.instanceId), status: String(e.status ?? e.kind ?? 'error') };
      metrics.agentRequests.inc(labels);
      metrics.agentLatency.observe(labels, e.durationMs / 1000);
    },
  };
  const client = options.agentApi ?? createAgentApi(config.agent!, clientOptions);
  const agentApi = learnInstancesFrom(client, instanceLabel);

  if (agentApi.calls) metrics.watchAgentCalls(agentApi.calls);

  // BullMQ loads its ~60 scripts onto its connection, which makes every MULTI on it slow
  // (measured 55 µs against 7 µs); the bridge's own commands use a connection of their own.
  const bullRedis = createRedis(config.redis, { name: 'agent-bridge-queue' }) as Redis;
  bullRedis.on('error', () => {});
  // The ends of queued messages that are neither answered nor given up by a worker: counted and logged.
  const ends = new MessageEnds(metrics, logger);
  const queue = new ChatQueue({
    connection: bullRedis,
    redis,
    prefix,
    keepCompleted: config.queue.keepCompleted,
    keepFailed: config.queue.keepFailed,
    maxPendingPerChannel: config.queue.maxPendingPerChannel,
    threadFollowUpDays: config.queue.threadFollowUpDays,
    atMostOnce: config.queue.callGuarantee === 'at-most-once',
    ends,
  });
  // The main connection's lost/back lines speak for Redis outages; anything else is worth a warning.
  queue.queue.on('error', (err) => {
    if (isRedisConnectionError(err)) logger.debug({ ...errorFields(err) }, 'queue connection error');
    else logger.warn({ ...errorFields(err) }, 'queue connection error');
  });
  // Ingress looks the binding up for every message: served from memory, dropped on bind/unbind anywhere.
  const bindings = createCachedBindingStore({
    store: createBindingStore({ redis, prefix: storePrefix, defaults: config.bindings, logger }),
    redis,
    prefix: storePrefix,
    logger,
  });
  const quota = createQuota({ redis, prefix: storePrefix, defaults: config.quotas });
  const dropLog = createDropLog({ redis, prefix: storePrefix, logger });
  const audit = createAuditLog({ redis, prefix: storePrefix, maxEntries: config.auditMaxEntries });
  const prompts = createSuggestedPromptStore({ redis, prefix: storePrefix });
  const feedback = createFeedbackStore({
    redis,
    prefix: storePrefix,
    maxEntries: config.feedbackMaxEntries,
    registry: metrics.registry,
    instanceLabel: (id) => instanceLabel.label(id),
  });
  const failures = new FailureLog(redis, storePrefix);
  const fingerprints = fingerprintsFor(config, redis, storePrefix, logger);
  // Log lines too: an agent error a worker logs may quote a credential another process took.
  const releaseRedactor = fingerprints ? secrets.addRedactor((line) => fingerprints.redactLogLine(line)) : undefined;
  // Whose account pays: the deployment's (AGENT_API_KEY) or each workspace's own (/agent setup).
  const accounts: AgentAccounts =
    config.agentAccountMode === 'per-workspace'
      ? perWorkspaceAccounts({
          store: createAccountStore(redis, storePrefix, createSealedBox(config.encryptionKey!)),
          // Same service, limits and metrics as the shared client; only the credentials differ.
          clientFor: (account) =>
            learnInstancesFrom(
              options.agentApiFor?.(account) ??
                createAgentApi({ ...config.agent!, apiKey: account.apiKey, sessionToken: account.sessionToken, sessionCookie: undefined }, clientOptions),
              instanceLabel,
            ),
          onSecret: (value) => void secrets.add(value),
        })
      : sharedAccount(agentApi);
  const queueInfo: QueueInfo = { counts: () => queue.counts(), recentFailures: (n) => failures.recent(n) };

  const ports: ReplyPorts = {};
  for (const p of options.platforms) ports[p.platform] = p.createReplyPort({ config, logger, redis, secrets });

  // Answers name the command as each platform's users type it, and its word for a workspace.
  const commandsFor = (vocabulary: PlatformVocabulary) =>
    createCommands({
      agentApi,
      accounts,
      bindings,
      quota,
      dropLog,
      audit,
      queueStats: () => queue.counts(),
      unfinishedIn: (platform, channelId) => queue.unfinishedIn(platform, channelId),
      logger,
      secrets,
      ...(fingerprints ? { credentialFingerprints: fingerprints } : {}),
      commandName: vocabulary.command,
      workspaceNoun: vocabulary.workspace,
      ...(vocabulary.arguments ? { argumentStyle: vocabulary.arguments } : {}),
      prompts,
      feedback,
    });
  const commands = commandsFor(DEFAULT_VOCABULARY);

  const q = config.quotas;
  const anyDefaultQuota = q.userPerDay + q.userPerMinute + q.channelPerDay + q.channelPerMinute > 0;
  const seen = createSeenLedger({ redis, prefix: storePrefix, logger });
  // Each platform's wording, for the notices ingress and the worker post.
  const vocabularies = Object.fromEntries(options.platforms.map((p) => [p.platform, p.vocabulary(config)]));
  const ingress = createIngress({
    bindings,
    queue,
    seen,
    ports,
    logger,
    metrics,
    maxMessageChars: config.maxMessageChars,
    quota,
    quotasActive: (b) => anyDefaultQuota || Object.values(b.quota ?? {}).some((n) => (n ?? 0) > 0),
    drops: dropLog,
    ...(accounts.mode === 'per-workspace' ? { accounts } : {}),
    vocabularies,
  });

  const agentReady = agentReadiness(agentApi);
  let stopping: Promise<void> | undefined;
  const http = createHttpServer({
    host: config.http.host,
    port: config.http.port,
    metrics,
    logger,
    redis,
    agentReady,
    stopping: () => stopping !== undefined,
    components: () => Object.fromEntries(adapters.flatMap((a) => (a.readiness ? [[a.platform, a.readiness()]] : []))),
    beforeMetrics: async () => {
      const counts = await queue.counts();
      for (const [state, n] of Object.entries(counts)) metrics.queueDepth.set({ state }, n);
    },
  });
  await mountDashboard(http.app, { queues: [queue.queue], user: config.dashboard?.user, password: config.dashboard?.password, logger });

  const adapters: Adapter[] = [];
  /** The bound port (HTTP_PORT=0 picks one), set before the adapters start. */
  let httpPort = config.http.port;
  let worker: ChatWorker | undefined;
  let workerRedis: Redis | undefined;
  if (config.role !== 'ingress') {
    // An answer quoting a credential added before this start must be recognised from the first job.
    await fingerprints?.ready();
    const blocking = createRedis(config.redis, { blocking: true, name: 'agent-bridge-worker' }) as Redis;
    blocking.on('error', () => {});
    workerRedis = blocking;
    const processor = new MessageProcessor({
      agent: agentApi,
      ...(accounts.mode === 'per-workspace' ? { accounts } : {}),
      ports,
      mailbox: queue.mailbox,
      logger,
      metrics,
      retry: { attempts: config.queue.attempts, baseDelayMs: config.queue.retryBaseDelayMs },
      failures,
      drops: dropLog,
      threadContext: config.threadContext,
      callGuarantee: config.queue.callGuarantee,
      maxReplyChunks: config.queue.maxReplyChunks,
      workingIndicatorDelayMs: config.queue.workingIndicatorDelayMs,
      // The registry: this process's secrets, and the fingerprints as a log line's words are
      // cut; then the fingerprints with an answer's words (between spaces only).
      redact: fingerprints ? (text) => fingerprints.redact(secrets.redact(text)) : (text) => secrets.redact(text),
      vocabularies,
    });
    metrics.watchRepliesWaiting(() => processor.repliesWaiting);
    worker = startChatWorker({
      connection: blocking,
      prefix,
      queue: queue.queue,
      chatQueue: queue,
      mailbox: queue.mailbox,
      processor,
      logger,
      concurrency: config.queue.concurrency,
      lockDurationMs: config.queue.lockDurationMs,
      stalledIntervalMs: config.queue.stalledIntervalMs,
      drops: dropLog,
      ends,
    });
  }

  let stopAnnouncing: (() => void) | undefined;
  if (config.role !== 'worker') {
    stopAnnouncing = await keepAnnouncing(redis, storePrefix, ownPlatforms, (err) => logger.debug({ ...errorFields(err) }, 'could not record the platforms this ingress serves'));
    for (const p of options.platforms) {
      const adapter = p.createAdapter({
        config,
        logger: logger.child({ platform: p.platform }),
        secrets,
        ingress,
        seen,
        commands: commandsFor(p.vocabulary(config)),
        http: http.app,
        httpPort: () => httpPort,
        redis,
        replyPort: ports[p.platform]!,
        bindings,
        queueInfo,
        audit,
        dropQueuedWork: (platform, workspaceId) => queue.dropWorkspace(platform, workspaceId),
        withdrawMessage: (conversation, messageId, timing) => queue.withdraw(encodeConversationId(conversation), messageId, newReference(), timing),
        queuedIdsStartingWith: (conversation, prefix) => queue.idsStartingWith(encodeConversationId(conversation), prefix),
        // Not through the ingress (no quota, no job): only its checks.
        editMessage: createEditedMessages({ queue, bindings, ports, logger, maxMessageChars: config.maxMessageChars }),
        forgetAccount: (platform, workspaceId) => accounts.forget(platform, workspaceId),
        feedback,
        metrics,
      });
      adapters.push(adapter);
    }
  }

  const stop = () => {
    stopping ??= (async () => {
      outages.quiet();
      stopAnnouncing?.();
      logger.info('shutting down');
      await Promise.allSettled(adapters.map((a) => a.stop()));
      await worker?.close(config.shutdownTimeoutMs);
      await http.close();
      await queue.close().catch(() => {});
      // The worker's connection may still carry commands of jobs cut off by the timeout.
      workerRedis?.disconnect();
      // The ports' subscriptions (Slack's gone channels, Discord's gone places) are duplicates of `redis`: closed with it.
      await Promise.allSettled([bindings.close(), fingerprints?.close(), ...Object.values(ports).map((p) => p?.close?.()), redis.quit(), bullRedis.quit()]);
      releaseRedactor?.();
      logger.info('stopped');
    })();
    return stopping;
  };

  // The start-up listing runs while the adapters start. Waited for briefly, so it is done (and
  // its labels known) by the time startBridge returns; a service that neither answers nor
  // refuses is not waited out, and one that refuses our credential stops start-up.
  const agentCheck = checkAgentAtStartUp(agentApi, { baseUrl: config.agent?.baseUrl, credential: listingCredential(config), logger });
  agentCheck.catch(() => {}); // Settled below, unless an adapter fails first.
  try {
    httpPort = await http.listen().catch((err: NodeJS.ErrnoException) => {
      throw listenProblem(err, config.http);
    });
    for (const a of adapters) await a.start();
    await withTimeout(agentCheck, 2_000, () => undefined);
  } catch (err) {
    // Nothing started may outlive a failed start-up.
    await stop();
    throw err;
  }
  logger.info(
    { role: config.role, platforms: options.platforms.map((p) => p.platform), port: httpPort },
    'agent-bridge started',
  );

  return {
    config,
    ingress,
    commands,
    ports,
    bindings,
    queue,
    queueInfo,
    redis,
    http: http.app,
    httpPort,
    metrics,
    stop,
  };
}

export { RedisUnavailableError };

export type { Platform };

