import type { ReplyPort, ThreadMessage } from '../core/reply-port.js';
import { BridgeError, THREAD_UNREADABLE } from '../core/errors.js';
import { errorFields, type Logger } from '../logger.js';
import type { ChatMessage } from '../queue/types.js';

/**
 * What the agent is sent for `m`: its text, or with thread context on, the thread's earlier
 * messages before it. Each port decides what "the thread" is (Slack/Discord threads; the
 * playground's channel). `log` is asked for only when there is something to say.
 */
export async function promptFor(
  m: ChatMessage,
  port: ReplyPort,
  threadContext: { maxMessages: number; maxChars: number },
  log: () => Logger,
  waitedBefore = false,
): Promise<string> {
  if (m.context !== 'thread' || !port.fetchThread) return m.text;
  try {
    const earlier = await port.fetchThread(m.reply, threadContext.maxMessages);
    // The earlier lines name people; the new message's speaker is named too, not an ID.
    const speaker = earlier.some((e) => !e.gap) && !m.userName ? await port.nameOf?.(m.reply, m.userId).catch(() => undefined) : undefined;
    return buildThreadPrompt(earlier, m, threadContext.maxChars, speaker);
  } catch (err) {
    if (err instanceof BridgeError && err.kind === 'rate_limited') {
      // Limited again after a wait (Slack lets apps outside its Marketplace read a thread once a
      // minute per workspace, so a burst of threaded questions would each wait minutes): the
      // message goes without the thread, and the agent is told so.
      if (waitedBefore) {
        log().info({ ...errorFields(err) }, 'the thread is still rate limited after a wait: sending the message without it');
        return `${UNREADABLE_THREAD_NOTE}\n\n${m.text}`;
      }
      // The first time: wait and read it again rather than answer without the conversation. Marked
      // so that a give-up says the thread could not be read, not that the reply could not be posted.
      throw new BridgeError(err.source, err.kind, err.message, { code: THREAD_UNREADABLE, status: err.status, retryAfterMs: err.retryAfterMs, cause: err });
    }
    log().warn({ ...errorFields(err) }, 'could not fetch the thread; sending the message without context');
    return m.text;
  }
}

/** Sent before a message whose thread the platform would not let the bridge read. */
export const UNREADABLE_THREAD_NOTE = '(The earlier messages of this thread could not be read just now, so this message comes without them.)';
/** A transcript's line where its later messages could not be read. */
export const THREAD_GAP_LINE = '(later messages of this thread could not be read)';

/**
 * Prefixes the message with a transcript of the thread's earlier messages (newest kept when
 * the transcript must be cut), since the agent API takes one message and no conversation.
 */
export function buildThreadPrompt(earlier: ThreadMessage[], m: ChatMessage, maxChars: number, speakerName?: string): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = earlier.length - 1; i >= 0; i--) {
    const e = earlier[i]!;
    const line = e.gap ? THREAD_GAP_LINE : `${e.isBot ? `${e.author} (bot)` : e.author}: ${e.text.replace(/\s+/g, ' ').trim()}`;
    if (size + line.length + 1 > maxChars) break;
    lines.unshift(line);
    size += line.length + 1;
  }
  if (lines.length === 0 || lines.every((l) => l === THREAD_GAP_LINE)) return m.text;
  const speaker = m.userName ?? speakerName ?? m.userId;
  return `Earlier messages in this thread:\n${lines.join('\n')}\n\nNew message from ${speaker}:\n${m.text}`;
}
