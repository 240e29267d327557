import { PlatformError } from '../../src/core/errors.js';
import type { ReplyTarget } from '../../src/core/message.js';
import type { ReplyPortDeps } from '../../src/core/platform-context.js';
import type { ReplyPort, ThreadMessage } from '../../src/core/reply-port.js';
import { splitMarkdown } from '../../src/render/split-markdown.js';
import { unmaskOutsideFences } from '../../src/render/masked-links.js';
import { createWebEventStore, type WebEventStore } from './event-store.js';
import type { WebEvent } from './events.js';

/** Longest reply message the page shows; longer replies are split like on the other platforms. */
export const WEB_MAX_CHUNK = 4000;

/** Events read back when building thread context. */
const CONTEXT_SCAN = 300;

/** Events read back when looking for a chunk an earlier attempt may have appended (the stream keeps ~500). */
const CHUNK_LOOKUP_SCAN = 500;

/**
 * The web platform's reply port. It never talks to browsers: it appends to the channel's
 * Redis stream and announces the event, so it works the same in a worker-only process.
 */
export function createWebReplyPort(deps: ReplyPortDeps, store?: WebEventStore): ReplyPort {
  const events = store ?? createWebEventStore({ redis: deps.redis, prefix: deps.config.queue.prefix, logger: deps.logger });

  const append = async (event: WebEvent): Promise<void> => {
    try {
      await events.append(event);
    } catch (err) {
      throw new PlatformError('web', 'network', 'could not write to the web channel stream in Redis', { cause: err });
    }
  };

  return {
    platform: 'web',
    // The page links `[label](url)` as written: a label naming another address than the link
    // opens (a reply written by a prompt injection) is shown as text, the real URL after it.
    render: (markdown) => splitMarkdown(unmaskOutsideFences(markdown, (label, target) => `${label} (${target})`), WEB_MAX_CHUNK),
    async postChunk(target, chunk, index, info) {
      // An append is one atomic script, so a chunk is either wholly in the stream or not at all.
      if (info?.mayExist && (await alreadyAppended(events, target, (e) => e.type === 'reply' && e.index === index))) return;
      await append({
        type: 'reply',
        channelId: target.channelId,
        replyTo: target.messageId,
        index,
        text: chunk,
        at: Date.now(),
        // The last chunk carries the feedback buttons.
        ...(info?.agentMessageId && info.instanceId && index === info.total - 1
          ? { feedback: { instanceId: info.instanceId, agentMessageId: info.agentMessageId } }
          : {}),
      });
    },
    async postNotice(target, text, info) {
      // A give-up notice a stopped worker may have appended already.
      if (info?.mayExist && (await alreadyAppended(events, target, (e) => e.type === 'notice' && e.text === text))) return;
      await append({ type: 'notice', channelId: target.channelId, replyTo: target.messageId, text, at: Date.now() });
    },
    startWorking: (target) => append({ type: 'working', channelId: target.channelId, replyTo: target.messageId, at: Date.now() }),
    stopWorking: (target, outcome) =>
      append({ type: 'done', channelId: target.channelId, replyTo: target.messageId, outcome, at: Date.now() }),
    fetchThread: (target, limit) => fetchThread(events, target, limit),
  };
}

/** Whether the channel's stream already holds an event (a chunk, a notice) of the reply to `target`. */
async function alreadyAppended(events: WebEventStore, target: ReplyTarget, isIt: (e: WebEvent) => boolean): Promise<boolean> {
  let recent;
  try {
    recent = await events.history(target.channelId, { count: CHUNK_LOOKUP_SCAN });
  } catch (err) {
    // Never append blindly: the chunk may be there. The worker retries.
    throw new PlatformError('web', 'network', 'could not read the web channel stream from Redis', { cause: err });
  }
  return recent.some((e) => (e.type === 'reply' || e.type === 'notice') && e.replyTo === target.messageId && isIt(e));
}

/** A web channel has no threads: its context is the channel's recent conversation. */
async function fetchThread(events: WebEventStore, target: ReplyTarget, limit: number): Promise<ThreadMessage[]> {
  let history;
  try {
    history = await events.history(target.channelId, { count: CONTEXT_SCAN });
  } catch (err) {
    throw new PlatformError('web', 'network', 'could not read the web channel stream from Redis', { cause: err });
  }
  const trigger = history.findIndex((e) => e.type === 'message' && e.messageId === target.messageId);
  const earlier = trigger >= 0 ? history.slice(0, trigger) : history;
  const messages: ThreadMessage[] = [];
  let lastReplyTo: string | undefined;
  for (const e of earlier) {
    if (e.type === 'message') {
      messages.push({ author: e.userName || e.userId, text: e.text, isBot: false });
      lastReplyTo = undefined;
    } else if (e.type === 'reply') {
      // Chunks of one answer read as one message, as they were written.
      const last = messages.at(-1);
      if (last?.isBot && lastReplyTo === e.replyTo) last.text += `\n\n${e.text}`;
      else messages.push({ author: 'agent', text: e.text, isBot: true });
      lastReplyTo = e.replyTo;
    }
  }
  return limit > 0 ? messages.slice(-limit) : [];
}
