import type { App } from '@slack/bolt';
import { errorFields } from '../../src/logger.js';
import type { WebClient } from '@slack/web-api';
import { decodeFeedbackValue, type FeedbackStore } from '../../src/feedback/index.js';
import type { Logger } from '../../src/logger.js';
import { slackErrorCode } from './errors.js';
import { FEEDBACK_ACTION_ID } from './feedback-blocks.js';

export interface FeedbackActionDeps {
  feedback: FeedbackStore;
  logger: Logger;
}

const THANKS = 'Thanks for the feedback!';
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/**
 * A click on a reply's feedback buttons (`block_actions`, element `feedback_buttons`): one
 * vote per user per reply, recorded against the instance and the agent's message ID the
 * button carries; the clicker gets an ephemeral "thanks" in the reply's thread.
 */
export function registerFeedbackAction(app: App, deps: FeedbackActionDeps): void {
  app.action({ type: 'block_actions', action_id: FEEDBACK_ACTION_ID }, async ({ ack, body, action, client }) => {
    await ack();
    const value = str((action as unknown as Record<string, unknown>).value);
    const ref = value ? decodeFeedbackValue(value) : undefined;
    const b = body as unknown as Record<string, any>;
    const channel = str(b.channel?.id) ?? str(b.container?.channel_id);
    const messageTs = str(b.container?.message_ts) ?? str(b.message?.ts);
    const threadTs = str(b.container?.thread_ts) ?? str(b.message?.thread_ts);
    const userId = str(b.user?.id);
    if (!ref || !channel || !userId) {
      deps.logger.debug('feedback click without a usable value; ignored');
      return;
    }
    const link = ref.rating === 'negative' && messageTs ? await permalink(client, channel, messageTs) : undefined;
    try {
      await deps.feedback.record({
        ...ref,
        platform: 'slack',
        workspaceId: str(b.team?.id) ?? 'unknown',
        channelId: channel,
        userId,
        ...(link ? { link } : {}),
      });
    } catch (err) {
      deps.logger.error({ ...errorFields(err) }, 'could not record feedback');
      return;
    }
    try {
      await client.chat.postEphemeral({ channel, user: userId, text: THANKS, ...(threadTs ? { thread_ts: threadTs } : {}) });
    } catch (err) {
      deps.logger.warn({ code: slackErrorCode(err) }, 'could not thank for the feedback');
    }
  });
}

/** The reply's permalink, for `/agent feedback`; best effort. */
async function permalink(client: WebClient, channel: string, ts: string): Promise<string | undefined> {
  try {
    return (await client.chat.getPermalink({ channel, message_ts: ts })).permalink;
  } catch {
    return undefined;
  }
}
