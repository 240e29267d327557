import { readAttachments, type AttachmentRef, type ReadAttachmentsResult } from '../../src/attachments/index.js';

/** Reads the files of a Slack message into its text (see src/attachments). */
export type SlackFileReader = (text: string, files: unknown) => Promise<ReadAttachmentsResult>;

/** `files[]` of a `file_share` message (or a shortcut's message) as platform-free references. */
export function slackFiles(files: unknown): AttachmentRef[] {
  if (!Array.isArray(files)) return [];
  return files.slice(0, 20).flatMap((f): AttachmentRef[] => {
    if (!f || typeof f !== 'object') return [];
    const o = f as Record<string, unknown>;
    const name = typeof o.name === 'string' && o.name ? o.name : typeof o.title === 'string' && o.title ? o.title : 'file';
    return [
      {
        name,
        ...(typeof o.mimetype === 'string' ? { mimetype: o.mimetype } : {}),
        ...(typeof o.size === 'number' ? { size: o.size } : {}),
        ...(typeof o.url_private_download === 'string' ? { url: o.url_private_download } : typeof o.url_private === 'string' ? { url: o.url_private } : {}),
      },
    ];
  });
}

/**
 * Downloads with the bot token (scope files:read). The token goes only to the file URL's own
 * host; Slack answers a bad token with an HTML sign-in page, which counts as unreadable.
 */
export function createSlackFileReader(options: { botToken: string; maxBytes: number; maxChars: number; timeoutMs?: number }): SlackFileReader {
  return (text, files) =>
    readAttachments(text, slackFiles(files), {
      maxBytes: options.maxBytes,
      maxChars: options.maxChars,
      timeoutMs: options.timeoutMs ?? 10_000,
      authHeaders: { authorization: `Bearer ${options.botToken}` },
    });
}
