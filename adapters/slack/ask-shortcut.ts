import type { App } from '@slack/bolt';
import { errorFields } from '../../src/logger.js';
import { dmBindingChannel } from '../../src/bindings/dm.js';
import type { BindingStore } from '../../src/bindings/types.js';
import type { IncomingMessage } from '../../src/core/message.js';
import type { Logger } from '../../src/logger.js';
import { asAssistantMessage } from './assistant-message.js';
import type { AssistantThreads } from './assistant-threads.js';
import { slackErrorCode } from './errors.js';
import { messageView } from './modal-views.js';
import { installationKey } from './installations.js';
import { cannotPostForShortcut, shortcutReach } from './shortcut-reach.js';
import { handOver, type MessageListenerDeps } from './message-listener.js';
import type { BotIdentity } from './normalise.js';
import { filesOf, plainWithForwards } from './shown-text.js';
import type { UserDirectory } from './user-directory.js';

/** callback_id of the "Ask the agent" message shortcut (in the manifests). */
export const ASK_AGENT_CALLBACK_ID = 'ask_agent';

export interface AskShortcutDeps extends MessageListenerDeps {
  bindings: BindingStore;
  users: UserDirectory;
  /** Assistant threads: a message in one is answered as one typed there. */
  threads?: Pick<AssistantThreads, 'kind' | 'contextChannel'>;
  identity(): Promise<BotIdentity>;
  logger: Logger;
  /** MAX_MESSAGE_CHARS: a longer message is refused to the asker alone. */
  maxMessageChars?: number;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** "Ask the agent" on a message with nothing the agent could read (only images, buttons, a poll). */
export const nothingToAsk = "That message has no text or text file I can send to the agent (images and other content aren't read).";

/** "Ask the agent" used without a message (set up as a global shortcut). */
export const askOnAMessage =
  "Ask the agent works on a message: hover over the message, open its More actions menu (⋯) and choose Ask the agent. To ask something yourself, mention me in a channel I'm in, or send me a direct message.";

/** "Ask the agent" on a message longer than the bridge sends. */
export const tooLongToAsk = (length: number, max: number) =>
  `That message is ${length.toLocaleString('en-US')} characters long, more than the ${max.toLocaleString('en-US')} the agent is sent, so it was not sent.`;

export const notBoundForShortcut =
  "This channel isn't connected to an agent, so there is no one to ask. An admin can connect one with `/agent bind <instance-id>`.";

/**
 * "Ask the agent" on any message (`message_action`): the message's text, with its author's
 * name, goes through the ingress like any message (quotas, dedupe, `/agent why`) to the
 * instance bound to its channel, and the answer lands in that message's thread. One ask per
 * user per message: a second click is a duplicate, never a second billed call.
 */
/** What the IDs of the asks about one message start with (one ask per person per message). */
export const askIdPrefix = (channel: string, messageTs: string) => `${channel}:${messageTs}:ask:`;

export function registerAskShortcut(app: App, deps: AskShortcutDeps): void {
  // "Ask the agent" set up as a global shortcut (in the app's settings, not from the manifest):
  // there is no message to ask about. Without an ack Slack shows the user an error after 3 s;
  // the trigger (good for 3 s) opens a note saying where the shortcut works.
  app.shortcut({ type: 'shortcut', callback_id: ASK_AGENT_CALLBACK_ID }, async ({ ack, shortcut, client }) => {
    await ack();
    deps.logger.warn('"Ask the agent" was used as a global shortcut; it works on messages: make it a message shortcut (type: message) as in the manifest');
    await client.views
      .open({ trigger_id: shortcut.trigger_id, view: messageView(ASK_AGENT_CALLBACK_ID, 'Ask the agent', askOnAMessage) })
      .catch((err: unknown) => deps.logger.warn({ code: slackErrorCode(err) }, 'could not explain "Ask the agent" used as a global shortcut'));
  });

  app.shortcut({ type: 'message_action', callback_id: ASK_AGENT_CALLBACK_ID }, async ({ ack, shortcut, client, context, respond }) => {
    await ack();
    const s = shortcut as unknown as Record<string, any>;
    const channel = str(s.channel?.id);
    const asker = str(s.user?.id);
    const messageTs = str(s.message_ts) ?? str(s.message?.ts);
    if (!channel || !asker || !messageTs) return;
    const isDirect = channel.startsWith('D');
    const team = str(s.team?.id) ?? context.teamId;
    const target = (s.message ?? {}) as Record<string, unknown>;
    const threadTs = str(target.thread_ts) ?? messageTs;
    // A message in an assistant thread is answered as one typed there: by the instance of the
    // channel the user is looking at (the thread's context channel), with the status line.
    const assistant = isDirect && deps.threads ? (await deps.threads.kind(channel, threadTs).catch(() => undefined)) === 'assistant' : false;
    const contextChannel = assistant ? await deps.threads!.contextChannel(channel, threadTs).catch(() => undefined) : undefined;
    // A DM is answered by its workspace's DM binding (`dm:<team>`, falling back to the shared `dm`).
    const bindingChannelId = isDirect ? dmBindingChannel(team ?? 'unknown') : channel;
    const bound =
      (contextChannel ? await deps.bindings.get('slack', contextChannel) : undefined) ??
      (await deps.bindings.get('slack', channel)) ??
      (isDirect ? await deps.bindings.get('slack', bindingChannelId) : undefined);
    if (!bound) {
      // The shortcut's response_url reaches the user in a channel the bot is not a member of,
      // where chat.postEphemeral fails with not_in_channel (an unbound channel often is one).
      const explained = respond
        ? respond({ response_type: 'ephemeral', text: notBoundForShortcut })
        : client.chat.postEphemeral({ channel, user: asker, text: notBoundForShortcut });
      await explained.catch((err: unknown) => deps.logger.warn({ code: slackErrorCode(err) }, 'could not explain an unbound shortcut'));
      return;
    }
    // Before any billed call: the answer must be postable here (not a DM between two people,
    // not a channel the bot is not in), or the agent answers and nobody hears it.
    const reach = await shortcutReach(client, channel, asker);
    if (reach === 'unchecked') deps.logger.warn({ channel }, 'Ask the agent: could not check the bot can post here (rate limited, or conversations.info needs the *:read scopes: reinstall from the manifest); going ahead');
    if (reach === 'no') {
      deps.logger.info({ channel, reach }, 'Ask the agent: the bot cannot answer here; the asker is told, the agent is not called');
      const text = cannotPostForShortcut(isDirect);
      await (respond ? respond({ response_type: 'ephemeral', text }) : Promise.reject(new Error('no response_url')))
        .catch((err: unknown) => deps.logger.warn({ code: slackErrorCode(err) }, 'could not explain a shortcut the bot cannot answer'));
      return;
    }

    // "Add to Slack": the bot of this installation, from Bolt's authorize.
    const identity =
      deps.multiWorkspace && context.botUserId
        ? { userId: context.botUserId, ...(context.teamId ? { teamId: context.teamId } : {}) }
        : await deps.identity();
    const authorId = str(target.user);
    const author = str((target.user_profile as Record<string, unknown> | undefined)?.display_name) ??
      (authorId ? await deps.users.get(authorId).then((u) => u.name, () => authorId) : str(target.username) ?? str((target.bot_profile as Record<string, unknown> | undefined)?.name) ?? 'someone');
    const askerName = str(s.user?.name);
    // What the message shows: an app's message often has no `text`, only blocks or attachments.
    const { text: body, ownChars } = plainWithForwards(target, identity.userId);
    const files = filesOf(target);
    if (!/[^\s\p{Cf}]/u.test(body) && !files) {
      // Only images, buttons or the like: said to the asker alone, not as a hint in someone else's thread.
      await (respond ? respond({ response_type: 'ephemeral', text: nothingToAsk }) : client.chat.postEphemeral({ channel, user: asker, text: nothingToAsk }))
        .catch((err: unknown) => deps.logger.warn({ code: slackErrorCode(err) }, 'could not explain a shortcut on a message with no text'));
      return;
    }
    const messageId = `${askIdPrefix(channel, messageTs)}${asker}`;
    if (!(await deps.seen.first('slack', messageId))) {
      deps.logger.debug({ messageId }, 'Ask the agent: this user already asked about this message');
      return;
    }

    const asked: IncomingMessage = {
      platform: 'slack',
      messageId,
      conversation: { platform: 'slack', workspaceId: team ?? identity.teamId ?? 'unknown', channelId: channel, threadId: threadTs },
      bindingChannelId,
      userId: asker,
      ...(askerName ? { userName: askerName } : {}),
      // Under its heading once its files are read (handOver): only what it forwards may be shortened.
      text: body,
      ...(ownChars !== undefined ? { ownChars } : {}),
      isDirect,
      mentionsBot: true,
      repliesToBot: false,
      fromSelf: false,
      fromBot: false,
      hasAttachments: Array.isArray(files) && files.length > 0,
      reply: { channelId: channel, threadId: threadTs, messageId: messageTs, ...(deps.multiWorkspace ? { installation: installationKey(context) } : {}) },
      receivedAt: Date.now(),
      origin: 'shortcut',
    };
    const message = assistant ? asAssistantMessage(asked, contextChannel) : asked;
    /** Said to the asker alone (the message is someone else's, in their thread). */
    const tellAsker = (text: string, what: string) =>
      (respond ? respond({ response_type: 'ephemeral', text }) : client.chat.postEphemeral({ channel, user: asker, text })).then(
        () => undefined,
        (err: unknown) => deps.logger.warn({ code: slackErrorCode(err) }, `could not explain a shortcut on ${what}`),
      );
    try {
      await handOver(deps, message, files, undefined, undefined, {
        heading: `Message from ${author}:\n`,
        ...(deps.maxMessageChars !== undefined
          ? {
              tooLong: {
                maxChars: deps.maxMessageChars,
                tell: async (length: number) => {
                  await deps.seen.forget('slack', messageId);
                  await tellAsker(tooLongToAsk(length, deps.maxMessageChars!), 'a message too long to send');
                },
              },
            }
          : {}),
        // Only files that cannot be sent (an image, one too large): said to the asker alone, with which and why.
        nothingToSend: async (notice) => {
          await deps.seen.forget('slack', messageId);
          await tellAsker([nothingToAsk, notice].filter(Boolean).join('\n'), 'a message with nothing to send');
        },
      });
    } catch (err) {
      await deps.seen.forget('slack', messageId);
      deps.logger.error({ ...errorFields(err) }, 'could not hand an "Ask the agent" shortcut to the ingress');
    }
  });
}
