import type { ReplyPort } from '../core/reply-port.js';
import { clipAtWord } from '../core/scrub.js';
import { errorFields, type Logger } from '../logger.js';
import { replyCutNote } from './plain-words.js';

/**
 * Characters of an answer rendered per message it may be posted as: above every platform's
 * message size (Slack's chunks are 3,800, Discord's 2,000), so a cut never loses what fits.
 */
const RENDER_CHARS_PER_CHUNK = 4_000;

/**
 * The port's chunks of an answer, at most `maxChunks`: the last of a cut answer says so.
 * Only what can be posted is rendered: a Markdown renderer may take time that grows faster
 * than the text (300 KB of `*a` blocked the process for a minute), so the text is cut to what
 * `maxChunks` messages can hold first. A renderer that throws on what the agent sent (3,000
 * nested quotes overflow the stack) gets the text again with its Markdown escaped, shown as
 * written: the answer is billed, so it is posted rather than retried forever.
 */
export function renderReply(port: ReplyPort, reply: string, options: { maxChunks: number; redact: (text: string) => string; log: () => Logger }): string[] {
  const max = options.maxChunks;
  const cut = reply.length > max * RENDER_CHARS_PER_CHUNK;
  const text = cut ? clipAtWord(reply, max * RENDER_CHARS_PER_CHUNK) : reply;
  let chunks: string[];
  try {
    chunks = port.render(text);
  } catch (err) {
    options.log().warn({ ...errorFields(err), chars: text.length }, 'could not render the answer as Markdown; posting it as plain text');
    chunks = port.render(escapeMarkdown(text));
  }
  // A renderer decodes what the answer's redaction could not see: `&#45;` entities and
  // backslash escapes rebuild a secret the agent quoted in that form.
  chunks = chunks.map(options.redact);
  // An answer that renders to nothing (blank, invisible characters, only link definitions) still gets a word.
  if (!chunks.some(isVisible)) chunks = port.render('_(The agent sent an empty reply.)_');
  if (!cut && chunks.length <= max) return chunks;
  // The note is a chunk of its own: appended to a full chunk it could pass the platform's limit.
  const note = port.render(replyCutNote(max))[0] ?? replyCutNote(max);
  return [...chunks.slice(0, max - 1), note];
}

/** Text with every Markdown punctuation escaped: rendered, it shows as written, with no structure to parse. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|>~<&]/g, '\\$&');
}

/** Whether a rendered chunk shows anything: not only spaces and invisible format characters. */
function isVisible(chunk: string): boolean {
  return /[^\s\p{Cf}]/u.test(chunk);
}
