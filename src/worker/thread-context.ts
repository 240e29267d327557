import type { ThreadMessage } from '../core/reply-port.js';
import type { ChatMessage } from '../queue/types.js';

/**
 * Prefixes the message with a transcript of the thread's earlier messages (newest kept when
 * the transcript must be cut), since the agent API takes one message and no conversation.
 */
export function buildThreadPrompt(earlier: ThreadMessage[], m: ChatMessage, maxChars: number, speakerName?: string): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = earlier.length - 1; i >= 0; i--) {
    const e = earlier[i]!;
    const line = `${e.isBot ? `${e.author} (bot)` : e.author}: ${e.text.replace(/\s+/g, ' ').trim()}`;
    if (size + line.length + 1 > maxChars) break;
    lines.unshift(line);
    size += line.length + 1;
  }
  if (lines.length === 0) return m.text;
  const speaker = m.userName ?? speakerName ?? m.userId;
  return `Earlier messages in this thread:\n${lines.join('\n')}\n\nNew message from ${speaker}:\n${m.text}`;
}
