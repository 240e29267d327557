import type { App } from '@slack/bolt';
import type { IncomingMessage } from '../../src/core/message.js';
import type { EditOutcome, EditTiming } from '../../src/ingress/edited-message.js';
import { ownWords, withFilesRead } from '../../src/ingress/forwarded-fit.js';
import { errorFields, type Logger } from '../../src/logger.js';
import { slackChangeTiming } from './change-timing.js';
import { installationKey } from './installations.js';
import { mentionsPeopleById } from './mention-names.js';
import { withPeopleNamed, type MessageListenerDeps, type SlackEventContext } from './message-listener.js';
import { normaliseSlackEvent } from './normalise.js';
import { filesOf } from './shown-text.js';
import { mentionsUser } from './slack-text.js';

export interface EditDeps extends Pick<MessageListenerDeps, 'identity' | 'users' | 'files' | 'multiWorkspace'> {
  edit: (message: IncomingMessage, timing?: EditTiming) => Promise<EditOutcome>;
  logger: Logger;
}

/**
 * `message_changed` where its sender edited the message (`message.edited` set, and its text
 * changed: Slack sends the same subtype for link unfurls and a thread's reply count): the edited
 * message, normalised as a new one (mentions named, files read again), goes to the ingress's
 * edit (src/ingress/edited-message.ts), which replaces the waiting question's text or withdraws
 * it before its agent call, and does nothing after. An edit never asks a new question.
 * Slack delivers events in no order: with when the message was sent (its `ts`) and the edit made
 * (`edited.ts`), an edit that comes before its message is kept and applied as it is stored.
 */
export function registerEditListener(app: App, deps: EditDeps): void {
  app.event('message', async ({ body, event, context }) => {
    const e = event as { subtype?: string; channel?: unknown; channel_type?: unknown; message?: Record<string, unknown>; previous_message?: Record<string, unknown> };
    const edited = e.message;
    if (e.subtype !== 'message_changed' || !edited || typeof edited !== 'object' || !edited.edited) return;
    if (e.previous_message && e.previous_message.text === edited.text) return;
    const ctx = context as SlackEventContext;
    let messageId: string | undefined;
    try {
      const identity =
        deps.multiWorkspace && ctx.botUserId
          ? { userId: ctx.botUserId, ...(ctx.botId ? { botId: ctx.botId } : {}), ...(ctx.teamId ? { teamId: ctx.teamId } : {}) }
          : await deps.identity();
      // The message as it is now, read as a new one would be (its `edited` mark would make it ignored).
      const now: Record<string, unknown> = { ...edited, type: 'message', edited: undefined, channel: e.channel, channel_type: e.channel_type };
      const result = normaliseSlackEvent({ ...(body as object), event: now }, identity);
      if (result.kind !== 'message') return;
      let message = result.message;
      messageId = message.messageId;
      if (deps.multiWorkspace) message.reply = { ...message.reply, installation: installationKey(ctx) };
      if (deps.users && mentionsPeopleById(message.text)) message = await withPeopleNamed(message, deps.users);
      if (message.hasAttachments && deps.files) {
        const read = await deps.files(ownWords(message), filesOf(now), message.reply.installation);
        message = withFilesRead(message, read.text);
      }
      await deps.edit(message, editTiming(edited, e.previous_message, identity.userId));
    } catch (err) {
      // The text is not logged: the edit may have taken a secret out.
      deps.logger.warn({ messageId, ...errorFields(err) }, 'could not apply an edit to a waiting message: it may be answered as first sent');
    }
  });
}

/** When the edited message was sent and the edit made, and whether it mentioned the bot before. */
function editTiming(edited: Record<string, unknown>, previous: Record<string, unknown> | undefined, botUserId: string): EditTiming | undefined {
  if (typeof edited.ts !== 'string') return undefined;
  const mark = edited.edited as { ts?: unknown } | undefined;
  const timing = slackChangeTiming(edited.ts, mark?.ts);
  if (!timing) return undefined;
  // Without the message as it was, assume it did: a withdrawal kept costs little.
  const before = typeof previous?.text === 'string' ? previous.text : undefined;
  return before === undefined ? timing : { ...timing, mentionedBefore: mentionsUser(before, botUserId) };
}
