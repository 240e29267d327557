import type { WebClient } from '@slack/web-api';
import type { ReplyTarget } from '../../src/core/message.js';
import type { Logger } from '../../src/logger.js';
import { slackErrorCode } from './errors.js';

/**
 * `assistant.threads.setStatus` for an assistant thread; an empty status clears it. Best
 * effort, like the reaction it replaces: a status that cannot be shown never holds up a reply.
 */
export async function setAssistantStatus(client: WebClient, logger: Logger, target: ReplyTarget, status: string): Promise<void> {
  if (!target.threadId) return;
  try {
    await client.assistant.threads.setStatus({
      channel_id: target.channelId,
      thread_ts: target.threadId,
      status,
      ...(status ? { loading_messages: ['Thinking…', 'Asking the agent…'] } : {}),
    });
  } catch (err) {
    logger.warn({ channel: target.channelId, code: slackErrorCode(err) }, 'could not set the assistant thread status');
  }
}
