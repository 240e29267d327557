import type { Message } from 'discord.js';
import type { IncomingMessage } from '../../src/core/message.js';
import { readAttachments, type AttachmentRef } from '../../src/attachments/index.js';
import { ownWords, withFilesRead } from '../../src/ingress/forwarded-fit.js';

export interface AttachmentLimits {
  /** MAX_ATTACHMENT_BYTES: the largest file sent. */
  maxBytes: number;
  /** Room for the message with its files appended (MAX_MESSAGE_CHARS, less any prefix added later). */
  maxChars: number;
  /** Bound on each download. @defaultValue 10000 */
  timeoutMs?: number;
}

/** Discord's attachment objects as the shared reader takes them. `url` needs no token. */
export function attachmentRefs(message: Pick<Message, 'attachments'>): AttachmentRef[] {
  return [...message.attachments.values()].map((a) => ({
    name: a.name,
    ...(a.contentType ? { mimetype: a.contentType } : {}),
    size: a.size,
    url: a.url,
  }));
}

/**
 * Appends a message's text-like attachments as fenced blocks (bounded, see src/attachments) and
 * returns the one line naming files that were not sent. Discord's CDN URLs are signed: no
 * Authorization header is ever sent with them. Contents are never logged.
 */
export async function withAttachments(
  incoming: IncomingMessage,
  source: Pick<Message, 'attachments'>,
  limits: AttachmentLimits,
): Promise<{ message: IncomingMessage; notice?: string }> {
  const files = attachmentRefs(source);
  if (files.length === 0) return { message: incoming };
  // Read against the sender's own words: a long forward is shortened (by the ingress) rather than the files left out.
  const result = await readAttachments(ownWords(incoming), files, {
    maxBytes: limits.maxBytes,
    maxChars: limits.maxChars,
    timeoutMs: limits.timeoutMs ?? 10_000,
  });
  const read = withFilesRead(incoming, result.text);
  return {
    // Files are dealt with here: ingress's generic "attachments are not forwarded" note would be wrong.
    // With no text at all left, it still says the agent can only read text.
    message: { ...read, hasAttachments: read.text.trim().length === 0 },
    ...(result.notice ? { notice: result.notice } : {}),
  };
}
