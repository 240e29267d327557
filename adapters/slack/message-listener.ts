import type { App } from '@slack/bolt';
import type { Ingress } from '../../src/ingress/types.js';
import type { Logger } from '../../src/logger.js';
import { normaliseSlackEvent, type BotIdentity } from './normalise.js';
import type { SeenOnce } from './seen-once.js';
import { installationKey } from './installations.js';

export interface MessageListenerDeps {
  ingress: Ingress;
  logger: Logger;
  identity(): Promise<BotIdentity>;
  seen: SeenOnce;
  /** "Add to Slack": the bot's identity comes from Bolt's context, and replies name their installation. */
  multiWorkspace?: boolean;
}

/** What Bolt's authorize put in the context (per installation with "Add to Slack"). */
export interface SlackEventContext {
  botUserId?: string;
  botId?: string;
  teamId?: string;
  enterpriseId?: string;
  isEnterpriseInstall?: boolean;
}

/**
 * `message` and `app_mention`: normalise, hand to the ingress, done. Bolt has acknowledged
 * the event before this runs (HTTP and Socket Mode alike), so nothing here can make Slack
 * wait or redeliver. Never throws.
 */
export function createMessageHandler(deps: MessageListenerDeps) {
  return async function onSlackEvent(body: unknown, context: SlackEventContext = {}): Promise<void> {
    let messageId: string | undefined;
    try {
      const identity =
        deps.multiWorkspace && context.botUserId
          ? { userId: context.botUserId, ...(context.botId ? { botId: context.botId } : {}), ...(context.teamId ? { teamId: context.teamId } : {}) }
          : await deps.identity();
      const result = normaliseSlackEvent(body, identity);
      if (result.kind === 'ignored') {
        deps.logger.debug({ reason: result.reason }, 'Slack event ignored');
        return;
      }
      const message = result.message;
      if (deps.multiWorkspace) message.reply = { ...message.reply, installation: installationKey(context) };
      if (!(await deps.seen.first(message.messageId))) {
        deps.logger.debug({ messageId: message.messageId }, 'Slack delivery already handled');
        return;
      }
      messageId = message.messageId;
      const outcome = await deps.ingress.handle(message);
      if (outcome.status === 'dropped' && outcome.reason === 'redis_unavailable') await deps.seen.forget(message.messageId);
    } catch (err) {
      if (messageId) await deps.seen.forget(messageId);
      deps.logger.error({ messageId, err: { message: (err as Error)?.message } }, 'could not hand a Slack message to the ingress');
    }
  };
}

export function registerMessageListeners(app: App, deps: MessageListenerDeps): void {
  const handler = createMessageHandler(deps);
  app.event('message', async ({ body, context }) => handler(body, context));
  app.event('app_mention', async ({ body, context }) => handler(body, context));
}
