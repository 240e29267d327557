import { readAttachments, type AttachmentRef, type ReadAttachmentsResult } from '../../src/attachments/index.js';
import { keepSlackTokenOnRedirect } from './file-redirect-auth.js';

/** Reads the files of a Slack message into its text (see src/attachments). */
/** `installation`: the message's (multi-workspace mode), whose own bot token reads its files. */
export type SlackFileReader = (text: string, files: unknown, installation?: string) => Promise<ReadAttachmentsResult>;

/** `files[]` of a `file_share` message (or a shortcut's message) as platform-free references. */
export function slackFiles(files: unknown): AttachmentRef[] {
  if (!Array.isArray(files)) return [];
  return files.slice(0, 20).flatMap((f): AttachmentRef[] => {
    if (!f || typeof f !== 'object') return [];
    const file = f as Record<string, unknown>;
    const name = typeof file.name === 'string' && file.name ? file.name : typeof file.title === 'string' && file.title ? file.title : 'file';
    return [
      {
        name,
        ...(typeof file.mimetype === 'string' ? { mimetype: file.mimetype } : {}),
        ...(typeof file.size === 'number' ? { size: file.size } : {}),
        ...(typeof file.url_private_download === 'string' ? { url: file.url_private_download } : typeof file.url_private === 'string' ? { url: file.url_private } : {}),
      },
    ];
  });
}

/**
 * Downloads with the workspace's bot token (scope files:read): the single one, or with "Add to
 * Slack" the message's installation's. The token goes to the file URL's own host and along a
 * redirect only to another https Slack host (see {@link keepSlackTokenOnRedirect}); Slack
 * answers a missing or bad token with an HTML sign-in page, which counts as unreadable.
 */
export function createSlackFileReader(options: {
  botToken: (installation?: string) => Promise<string>;
  maxBytes: number;
  maxChars: number;
  timeoutMs?: number;
}): SlackFileReader {
  return async (text, files, installation) =>
    readAttachments(text, slackFiles(files), {
      maxBytes: options.maxBytes,
      maxChars: options.maxChars,
      timeoutMs: options.timeoutMs ?? 10_000,
      authHeaders: { authorization: `Bearer ${await options.botToken(installation)}` },
      keepAuthOnRedirect: keepSlackTokenOnRedirect,
    });
}
