import { dmBindingChannel } from '../../src/bindings/dm.js';
import type { IncomingMessage } from '../../src/core/message.js';

/**
 * A message in a Slack assistant thread as the ingress takes it, whether typed there or sent
 * with "Ask the agent": answered in the thread by the instance bound to the channel the user is
 * looking at (`contextChannel`), else by the workspace's DM binding; with the thread's transcript
 * and the status line. It counts against the DM's quotas, pending cap and `/agent why`, never the
 * viewed channel's: a private chat must not spend that channel's quota nor show up there.
 */
export function asAssistantMessage(message: IncomingMessage, contextChannel: string | undefined): IncomingMessage {
  return {
    ...message,
    isDirect: true,
    bindingChannelId: dmBindingChannel(message.conversation.workspaceId),
    ...(contextChannel ? { instanceChannelId: contextChannel } : {}),
    forceThreadContext: true,
    reply: { ...message.reply, assistantThread: true },
  };
}
