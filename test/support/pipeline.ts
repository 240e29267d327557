import { randomUUID } from 'node:crypto';
import type { Bridge } from '../../src/app.js';
import { encodeConversationId } from '../../src/core/conversation.js';
import { jobIdFor } from '../../src/queue/types.js';

import type { IncomingMessage } from '../../src/core/message.js';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { newPrefix, startTestBridge } from './bridge-harness.js';
import type { LogCapture } from './log-capture.js';
import { Sink, sinkPlatform } from './sink.js';

export { LogCapture } from './log-capture.js';

export interface Pipeline {
  prefix: string;
  agent: AgentEmulator;
  sink: Sink;
  bridge: Bridge;
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * The whole core (ingress → Redis → worker → agent emulator → sink) in this process, with
 * its own queue prefix. `env` adds or overrides settings, as an operator would.
 */
export async function startPipeline(
  env: Record<string, string> = {},
  sinkOptions: Parameters<typeof sinkPlatform>[1] = {},
): Promise<Pipeline> {
  const prefix = newPrefix('test');
  const agent = await startAgentEmulator();
  const sink = await new Sink().start();
  const t = await startTestBridge({
    prefix,
    agent,
    env: { BINDINGS: 'web:c1=demo-helper,web:c2=demo-helper,web:dm=demo-helper', ...env },
    platforms: [sinkPlatform(sink.url, sinkOptions)],
    closeWith: [sink],
  });
  return { prefix, agent, sink, bridge: t.bridge, logs: t.logs, close: t.close };
}

let counter = 0;

/** The flags of a person's message in a channel that mentions the bot and carries no files. */
export const PERSON_MENTION_IN_CHANNEL = {
  isDirect: false,
  mentionsBot: true,
  repliesToBot: false,
  fromSelf: false,
  fromBot: false,
  hasAttachments: false,
} as const satisfies Partial<IncomingMessage>;

/** A web message in channel `channelId` (thread optional), addressed to the bot by default. */
export function webMessage(text: string, over: Partial<IncomingMessage> & { channelId?: string; threadId?: string } = {}): IncomingMessage {
  const channelId = over.channelId ?? 'c1';
  const messageId = over.messageId ?? `m${++counter}-${randomUUID().slice(0, 6)}`;
  return {
    platform: 'web',
    messageId,
    conversation: { platform: 'web', workspaceId: 'local', channelId, ...(over.threadId ? { threadId: over.threadId } : {}) },
    bindingChannelId: channelId,
    userId: 'u1',
    userName: 'Ada',
    text,
    ...PERSON_MENTION_IN_CHANNEL,
    reply: { channelId, messageId, ...(over.threadId ? { threadId: over.threadId } : {}) },
    receivedAt: Date.now(),
    ...over,
  };
}

/**
 * What ingress had done when it died between its two steps: `m` is in its conversation's
 * mailbox, which is reserved for `m`'s job, and that job was never added (bound to
 * demo-helper, as the pipeline's BINDINGS say).
 */
export async function pushWithoutJob(pipeline: Pipeline, m: IncomingMessage): Promise<void> {
  const pushed = await pipeline.bridge.queue.mailbox.push({
    platform: m.platform,
    messageId: m.messageId,
    conversationId: encodeConversationId(m.conversation),
    workspaceId: m.conversation.workspaceId,
    channelId: m.bindingChannelId,
    instanceId: 'demo-helper',
    text: m.text,
    userId: m.userId,
    reply: m.reply,
    receivedAt: Date.now(),
    errorPolicy: 'reply',
    context: 'off',
  }, 0, jobIdFor(m.platform, m.messageId));
  if (pushed.status !== 'queued') throw new Error(`the message was not pushed: ${pushed.status}`);
}
