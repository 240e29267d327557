/**
 * Files attached to chat messages, platform-free: which ones are text, a bounded download,
 * and the message text with them appended. Adapters map their platform's file objects to
 * {@link AttachmentRef} and call {@link readAttachments}; the result's `text` goes into
 * `IncomingMessage.text` and `notice` (if any) is posted to the user as one line.
 *
 * File contents are never logged: nothing here logs, and callers must not log `text`.
 */
import { appendFiles, notSentNotice, type SkippedFile, type TextFile } from './compose.js';
import { downloadText, type DownloadOptions, type DownloadResult } from './download.js';
import { isTextLike } from './text-like.js';

export { appendFiles, notSentNotice, downloadText, isTextLike };
export type { SkippedFile, TextFile, DownloadOptions, DownloadResult };
export { extensionOf } from './text-like.js';

/** A file as the platform describes it. */
export interface AttachmentRef {
  name: string;
  mimetype?: string;
  /** Size the platform reports, in bytes; a file announced over the limit is not downloaded. */
  size?: number;
  /** Where to download it (Slack `url_private_download`, Discord `url`). */
  url?: string;
}

/** Options of {@link readAttachments}. */
export interface ReadAttachmentsOptions extends Omit<DownloadOptions, 'maxBytes'> {
  /** MAX_ATTACHMENT_BYTES: the largest file sent. */
  maxBytes: number;
  /** MAX_MESSAGE_CHARS: the message with its files appended stays within it. */
  maxChars: number;
  /** Download function, replaceable in unit tests of callers. */
  download?: (url: string, options: DownloadOptions) => Promise<DownloadResult>;
}

/** The message text with the text-like files appended, and the one-line notice about the rest. */
export interface ReadAttachmentsResult {
  text: string;
  /** Files appended, by name. */
  sent: string[];
  skipped: SkippedFile[];
  /** One line for the user, or undefined when every file was sent. */
  notice?: string;
}

/**
 * Reads the text-like files (in parallel, each bounded) and appends them to `text` in the
 * order given. Other files, files over the limit, and downloads that fail are listed in the notice.
 */
export async function readAttachments(text: string, files: AttachmentRef[], options: ReadAttachmentsOptions): Promise<ReadAttachmentsResult> {
  const download = options.download ?? downloadText;
  const skipped: SkippedFile[] = [];
  const results = await Promise.all(
    files.map(async (file): Promise<TextFile | SkippedFile> => {
      if (!isTextLike(file)) return { name: file.name, reason: 'not_text' };
      if (file.size !== undefined && file.size > options.maxBytes) return { name: file.name, reason: 'too_large' };
      if (!file.url) return { name: file.name, reason: 'unreadable' };
      const res = await download(file.url, { ...options, maxBytes: options.maxBytes });
      if (res.ok) return { name: file.name, text: res.text };
      const reason = res.reason === 'too_large' ? 'too_large' : res.reason === 'not_text' ? 'not_text' : 'unreadable';
      return { name: file.name, reason };
    }),
  );
  const texts: TextFile[] = [];
  for (const r of results) {
    if ('text' in r) texts.push(r);
    else skipped.push(r);
  }
  const appended = appendFiles(text, texts, options.maxChars);
  const allSkipped = [...skipped, ...appended.skipped];
  const notSent = new Set(appended.skipped.map((s) => s.name));
  return {
    text: appended.text,
    sent: texts.map((t) => t.name).filter((n) => !notSent.has(n)),
    skipped: allSkipped,
    notice: notSentNotice(allSkipped, options.maxBytes),
  };
}
