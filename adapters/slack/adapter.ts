import { App, ExpressReceiver, SocketModeReceiver, type Receiver } from '@slack/bolt';
import { errorFields } from '../../src/logger.js';
import { slackConfigOf } from './config.js';
import type { NextFunction, Request, Response } from 'express';
import type { Adapter } from '../../src/core/adapter.js';
import type { AdapterContext } from '../../src/core/platform-context.js';
import { createAdminCheck } from './admin.js';
import { createBoltLogger } from './bolt-logger.js';
import { CREDENTIAL_CALLBACK_ID, registerCredentialModal } from './credential-modal.js';
import { registerSetupModal, SETUP_CALLBACK_ID } from './setup-modal.js';
import { slackErrorCode, toPlatformError } from './errors.js';
import { PlatformError } from '../../src/core/errors.js';
import { withoutUserinfo } from '../../src/core/url-userinfo.js';
import { createFeedbackStore } from '../../src/feedback/index.js';
import { createSuggestedPromptStore } from '../../src/prompts/suggested-prompts.js';
import { registerAskShortcut, ASK_AGENT_CALLBACK_ID } from './ask-shortcut.js';
import { registerAssistant } from './assistant.js';
import { createAssistantThreads } from './assistant-threads.js';
import { registerFeedbackAction } from './feedback-action.js';
import { FEEDBACK_ACTION_ID } from './feedback-blocks.js';
import { createSlackFileReader } from './files.js';
import { createMessageHandler, registerMessageListeners, type MessageListenerDeps } from './message-listener.js';
import { ackHoldIn, ackHoldOf, holdMessageAcks, holdSocketModeAcks, socketAckHoldOf } from './ack-hold.js';
import type { BotIdentity } from './normalise.js';
import { bullPrefix } from '../../src/redis.js';
import { registerSlashCommand } from './slash-command.js';
import { SLACK_MAX_BODY_BYTES, noRetryOnClientErrors, slackRequestGuard } from './request-guard.js';
import { createUserDirectory } from './user-directory.js';
import { createWebClient, slackApiUrl, webClientOptions } from './web-client.js';
import { createSealedBox } from '../../src/crypto/sealed-box.js';
import { createSlackInstallations } from './installations.js';
import { authorizeWithRefreshLock, createInstallationTokens, createInstallProvider, type InstallationTokens } from './installation-tokens.js';
import { oauthReceiverOptions } from './oauth.js';
import { registerUninstallListeners } from './uninstall.js';
import { registerDeletionListener } from './deleted-message.js';
import { registerEditListener } from './edited-message.js';
import { registerChannelLifeListeners } from './channel-life.js';
import { createGoneChannels } from './gone-channels.js';
import { answerUnreadable, authorizationErrors } from './authorize-errors.js';
import { boltClientCount, keepCurrentClientOnly } from './client-pool.js';
import { dropAnswersWithExpiredToken } from './expired-token.js';
import { identityAtStartUp } from './startup-identity.js';
import { ackForeignViews, UNHANDLED_CHECK_MS, unhandledRequestHandler } from './unhandled-requests.js';
import { createRequestUserDirectory } from './request-users.js';
import { watchSocketConnection } from './socket-connection-watch.js';
import { createViewClaims } from './view-claims.js';

/** Where Slack sends events, slash commands and interactivity in HTTP mode. */
export const SLACK_EVENTS_PATH = '/slack/events';

export interface SlackAdapterOptions {
  /**
   * Socket Mode: how long to wait for a pong, and the step of the reconnect back-off.
   * @defaultValue 5000 (the Socket Mode client's own default)
   */
  clientPingTimeoutMs?: number;
  /** Time the credential modal gives the service before showing "saving". @defaultValue 2300 */
  credentialAckBudgetMs?: number;
  /** How long start-up asks auth.test again while Slack is busy or unreachable. @defaultValue 60000 */
  startupRetryBudgetMs?: number;
}

export interface SlackAdapter extends Adapter {
  readonly mode: 'socket' | 'http';
  /** The bot's user and bot IDs, from auth.test (called once). */
  identity(): Promise<BotIdentity>;
  /** WebClients Bolt keeps for the installations' tokens ("Add to Slack"; observability and tests). */
  boltClients(): number;
}

/**
 * The Slack ingress: Bolt over Socket Mode when SLACK_APP_TOKEN is set, otherwise mounted on
 * the shared HTTP server at POST /slack/events (signatures checked with SLACK_SIGNING_SECRET).
 * The HTTP route is mounted here, synchronously, so the composition root must create the
 * adapter before it adds any body parser or catch-all handler to `ctx.http`.
 */
export function createSlackAdapter(ctx: AdapterContext, options: SlackAdapterOptions = {}): SlackAdapter {
  const slack = slackConfigOf(ctx.config);
  if (!slack) throw new Error('SLACK_BOT_TOKEN is missing: set it to run the Slack adapter');
  // The composition root already binds `platform`; binding it again repeats the key in every line.
  const logger = ctx.logger;
  const boltLogger = createBoltLogger(logger);
  const api = { apiUrl: slack.apiUrl, logger: boltLogger };
  // "Add to Slack": no token of its own; Bolt authorizes each request from its installation.
  const multi = slack.oauth !== undefined;
  if (multi && slack.appToken) throw new Error('SLACK_CLIENT_ID ("Add to Slack") runs over HTTP: unset SLACK_APP_TOKEN and set SLACK_SIGNING_SECRET');
  if (multi && !ctx.config.encryptionKey) throw new Error('INSTALLATION_ENCRYPTION_KEY is missing: Slack installations are stored encrypted');
  const installations = multi ? createSlackInstallations(ctx.redis, bullPrefix(ctx.config), createSealedBox(ctx.config.encryptionKey!), logger, (t) => ctx.secrets.add(t)) : undefined;
  const client = createWebClient(slack.botToken ?? '', api);

  let identityPromise: Promise<BotIdentity> | undefined;
  const identity = (): Promise<BotIdentity> =>
    (identityPromise ??= client.auth.test().then(
      (r) => {
        if (!r.user_id) throw new Error('auth.test returned no user_id');
        return { userId: r.user_id, ...(r.bot_id ? { botId: r.bot_id } : {}), ...(r.team_id ? { teamId: r.team_id } : {}) };
      },
      (err: unknown) => {
        identityPromise = undefined;
        throw toPlatformError('auth.test', err);
      },
    ));

  let stopped = false;
  const mode = slack.appToken ? 'socket' : 'http';
  let receiver: Receiver;
  const lateAck = () => logger.warn('a Slack message was not stored within 2 s (Redis slow?): acknowledged; the ingress keeps trying and tells the user if it cannot');
  if (slack.appToken) {
    const socketReceiver = new SocketModeReceiver({
      appToken: slack.appToken,
      // Bolt acks at once; holdSocketModeAcks keeps a message envelope's ack until it is stored.
      customPropertiesExtractor: socketAckHoldOf,
      logger: boltLogger,
      ...(options.clientPingTimeoutMs ? { clientPingTimeout: options.clientPingTimeoutMs } : {}),
      // Bolt hands these to the Socket Mode client: apps.connections.open goes to SLACK_API_URL too.
      installerOptions: { clientOptions: { slackApiUrl: slackApiUrl(slack.apiUrl) } },
      // A payload Bolt cannot process is acked anyway: redelivering it would fail the same way.
      processEventErrorHandler: async ({ error }) => {
        logger.warn({ ...errorFields(error) }, 'Bolt could not process a Socket Mode envelope; acknowledged it');
        return true;
      },
    });
    holdSocketModeAcks(socketReceiver.client, {
      onLate: lateAck,
      onAckError: (err) => logger.warn({ ...errorFields(err) }, 'a Socket Mode ack could not be sent (Slack will redeliver the envelope)'),
    });
    watchSocketConnection(socketReceiver.client, logger);
    receiver = socketReceiver;
  } else {
    if (!slack.signingSecret) throw new Error('SLACK_SIGNING_SECRET is missing: HTTP mode verifies every request from Slack (or set SLACK_APP_TOKEN for Socket Mode)');
    ctx.http.post(SLACK_EVENTS_PATH, slackRequestGuard({ stopped: () => stopped }), noRetryOnClientErrors(), holdMessageAcks({ onLate: lateAck }), (req: Request, _res: Response, next: NextFunction) => {
      if (req.readableEnded) logger.error('a body parser read the Slack request before Bolt: mount the Slack adapter before express.json()');
      next();
    });
    const express = new ExpressReceiver({
      signingSecret: slack.signingSecret,
      app: ctx.http,
      endpoints: SLACK_EVENTS_PATH,
      // Chunked bodies carry no length for the guard to check; Bolt stops reading at the limit (413).
      bodyLimit: SLACK_MAX_BODY_BYTES,
      // Bolt acks at once; holdMessageAcks keeps a message event's 200 until it is stored.
      processBeforeResponse: false,
      customPropertiesExtractor: ackHoldOf,
      logger: boltLogger,
      ...(installations ? oauthReceiverOptions(slack, installations) : {}),
      // What Bolt cannot dispatch (app_rate_limited, {}) is answered 200 at once, not 404 after 3 s.
      unhandledRequestHandler: unhandledRequestHandler(logger),
      unhandledRequestTimeoutMillis: UNHANDLED_CHECK_MS,
      // Bolt answers 500 by default, and Slack redelivers a payload that will fail again.
      processEventErrorHandler: async ({ error, response }) => {
        if (response.headersSent) {
          logger.error({ ...errorFields(error) }, 'a Slack listener failed after its ack');
          return false;
        }
        // Its installation could not be read (Redis unavailable): Slack is asked to send it again.
        if (answerUnreadable(error, response)) return true;
        logger.warn({ ...errorFields(error) }, 'Bolt could not process a Slack request; answered 400');
        // With X-Slack-No-Retry (noRetryOnClientErrors): a redelivery would fail the same way.
        response.writeHead(400).end();
        return true;
      },
    });
    // Before the App takes the installer's authorize as its own.
    if (installations && express.installer) authorizeWithRefreshLock(express.installer, installations);
    receiver = express;
  }

  const app = new App({
    receiver,
    logger: boltLogger,
    // Own messages go to the ingress too (marked fromSelf), which drops them on the record.
    ignoreSelf: false,
    convoStore: false,
    clientOptions: webClientOptions(api),
    // With "Add to Slack", Bolt takes authorize from the receiver's installer.
    ...(multi
      ? {}
      : {
          authorize: async () => {
            const id = await identity();
            return { botToken: slack.botToken, botUserId: id.userId, ...(id.botId ? { botId: id.botId } : {}), ...(id.teamId ? { teamId: id.teamId } : {}) };
          },
        }),
  });
  // A message event's ack is released once Bolt is done with it, if no listener did so before.
  app.use(async ({ context, next }) => {
    const hold = ackHoldIn(context);
    hold?.begin();
    // Redis known down: holding the ack would only wait out the bound (the ingress keeps trying
    // for its own bound and tells the user if it cannot store the message, as before).
    if (ctx.redis.status !== 'ready') hold?.release();
    try {
      await next();
    } finally {
      hold?.release();
    }
  });
  if (multi) app.use(keepCurrentClientOnly(app));
  if (multi) app.use(dropAnswersWithExpiredToken(logger));
  const authorizeFailures = authorizationErrors(logger);
  app.error(async (err) => {
    if (authorizeFailures.handle(err)) return;
    logger.error({ code: err.code, ...errorFields(err) }, 'Slack listener failed');
  });

  // With "Add to Slack", each request's own installation answers users.info.
  const users = multi ? createRequestUserDirectory(app) : createUserDirectory(client);
  const isAdmin = createAdminCheck(slack, users, logger);
  const storePrefix = `${bullPrefix(ctx.config)}:chat`;
  let tokens: Promise<InstallationTokens> | undefined;
  const fileToken = async (installation?: string): Promise<string> => {
    if (slack.botToken) return slack.botToken;
    if (!installations || !slack.oauth || !installation) throw new Error('a Slack file without its installation');
    tokens ??= createInstallationTokens(ctx.redis, createInstallProvider(slack.oauth, installations, slack.apiUrl, logger), installations, logger).then((t) => {
      ctx.redis.once('end', () => void t.close());
      return t;
    });
    return (await tokens).tokenFor(installation);
  };
  /** `files.info` (scope files:read) with the message's workspace's token, for Slack Connect's file stubs. */
  const fileInfo = async (fileId: string, installation?: string): Promise<unknown> => {
    const token = await fileToken(installation);
    const res = await (token === slack.botToken ? client : createWebClient(token, api)).files.info({ file: fileId });
    return res.file;
  };
  const messageDeps: MessageListenerDeps = {
    ingress: ctx.ingress,
    logger,
    identity,
    seen: ctx.seen,
    multiWorkspace: multi,
    replyPort: ctx.replyPort,
    bindings: ctx.bindings,
    users,
    // Files are read with the workspace's bot token: the one token, or the message's installation's.
    ...(ctx.config.maxAttachmentBytes > 0
      ? { files: createSlackFileReader({ botToken: fileToken, fileInfo, maxBytes: ctx.config.maxAttachmentBytes, maxChars: ctx.config.maxMessageChars, apiUrl: slack.apiUrl, logger }) }
      : {}),
  };
  // One handler for message events and assistant threads: each knows what the other has under way.
  const handleMessage = createMessageHandler(messageDeps);
  registerMessageListeners(app, handleMessage);
  const withdraw = ctx.withdrawMessage;
  if (withdraw) registerDeletionListener(app, { withdraw: (conversation, id, timing) => withdraw(conversation, id, timing), queuedIdsStartingWith: ctx.queuedIdsStartingWith?.bind(ctx), logger });
  const editMessage = ctx.editMessage;
  if (editMessage) registerEditListener(app, { ...messageDeps, edit: (m, timing) => editMessage(m, timing) });
  registerChannelLifeListeners(app, { gone: createGoneChannels(ctx.redis, ctx.config), bindings: ctx.bindings, logger, audit: ctx.audit });
  const assistantThreads = createAssistantThreads(ctx.redis, storePrefix, ctx.config.threadContext);
  if (installations) {
    registerUninstallListeners(app, {
      installations,
      bindings: ctx.bindings,
      redis: ctx.redis,
      config: ctx.config,
      logger,
      audit: ctx.audit,
      dropQueuedWork: ctx.dropQueuedWork,
      forgetAccount: ctx.forgetAccount,
      forgetAssistantDms: (dms) => assistantThreads.forgetDms(dms),
    });
  }
  registerAssistant(app, {
    threads: assistantThreads,
    prompts: createSuggestedPromptStore({ redis: ctx.redis, prefix: storePrefix }),
    bindings: ctx.bindings,
    logger,
    handleMessage,
    seen: ctx.seen,
  });
  registerFeedbackAction(app, {
    feedback: ctx.feedback ?? createFeedbackStore({ redis: ctx.redis, prefix: storePrefix, maxEntries: ctx.config.feedbackMaxEntries }),
    logger,
  });
  registerAskShortcut(app, { ...messageDeps, bindings: ctx.bindings, users, threads: assistantThreads, maxMessageChars: ctx.config.maxMessageChars });
  registerSlashCommand(app, { commands: ctx.commands, logger, isAdmin, commandName: slack.command });
  registerCredentialModal(app, {
    commands: ctx.commands,
    secrets: ctx.secrets,
    logger,
    isAdmin,
    commandName: slack.command,
    claims: createViewClaims(ctx.redis, storePrefix),
    ...(options.credentialAckBudgetMs !== undefined ? { ackBudgetMs: options.credentialAckBudgetMs } : {}),
  });
  registerSetupModal(app, { commands: ctx.commands, secrets: ctx.secrets, logger, isAdmin });
  // Buttons or shortcuts the bot did not make still get their ack, so Slack shows no error.
  app.action(new RegExp(`^(?!${FEEDBACK_ACTION_ID}$)`), async ({ ack }) => ack());
  app.shortcut(new RegExp(`^(?!${ASK_AGENT_CALLBACK_ID}$)`), async ({ ack }) => ack());
  ackForeignViews(app, [CREDENTIAL_CALLBACK_ID, `${CREDENTIAL_CALLBACK_ID}_done`, SETUP_CALLBACK_ID, `${SETUP_CALLBACK_ID}_done`]);

  let started: Promise<void> | undefined;
  let startSettled = false;
  let stopping: Promise<void> | undefined;
  return {
    platform: 'slack',
    mode,
    identity,
    boltClients: () => boltClientCount(app),
    start() {
      started ??= (async () => {
        try {
          if (!multi) await identityAtStartUp(identity, { logger, stopped: () => stopped, ...(options.startupRetryBudgetMs !== undefined ? { budgetMs: options.startupRetryBudgetMs } : {}) });
        } catch (err) {
          const refused = err instanceof PlatformError && (err.kind === 'unauthorized' || err.kind === 'forbidden');
          // Shown without the user name and password SLACK_API_URL may carry.
          const where = withoutUserinfo(slackApiUrl(slack.apiUrl));
          throw new Error(refused ? `Slack did not accept SLACK_BOT_TOKEN (${(err as Error).message})` : `could not reach Slack at ${where} (${(err as Error).message})`, { cause: err });
        }
        if (mode === 'socket') {
          if (stopped) return;
          try {
            await app.start();
          } catch (err) {
            // Stopped while Slack kept it waiting: the client rejects with nothing, and that is no failure.
            if (stopped) return;
            const code = slackErrorCode(err);
            throw new Error(`Socket Mode did not connect${code ? ` (${code}: check SLACK_APP_TOKEN, an xapp- token with connections:write)` : `: ${err instanceof Error ? err.message : String(err)}`}`, { cause: err });
          }
        }
        logger.info({ mode }, mode === 'socket' ? 'Slack connected over Socket Mode' : `Slack listening at POST ${SLACK_EVENTS_PATH}`);
      })().finally(() => (startSettled = true));
      return started;
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        if (mode === 'socket' && started) {
          // A start still waiting on Slack (Socket Mode turned off, Slack unreachable) ends only
          // once the client stops; the second stop closes a connection that start opened meanwhile.
          if (!startSettled) await app.stop().catch(() => undefined);
          await started.catch(() => undefined);
          await app.stop().catch((err: Error) => logger.warn({ ...errorFields(err) }, 'Slack Socket Mode did not close cleanly'));
        }
      })();
      return stopping;
    },
  };
}
