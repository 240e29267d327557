import { downloadText, readAttachments, type AttachmentRef, type DownloadOptions, type ReadAttachmentsResult } from '../../src/attachments/index.js';
import type { Logger } from '../../src/logger.js';
import { slackErrorCode } from './errors.js';
import { keepSlackTokenOnRedirect } from './file-redirect-auth.js';
import { withTimeout } from '../../src/core/with-timeout.js';

/** Reads the files of a Slack message into its text (see src/attachments). */
/** `installation`: the message's (multi-workspace mode), whose own bot token reads its files. */
export type SlackFileReader = (text: string, files: unknown, installation?: string) => Promise<ReadAttachmentsResult>;

/**
 * Whether a file URL is Slack's own, so the bot token may go with it: https on `slack.com` or
 * a subdomain, or the hostname of SLACK_API_URL (an emulator or a proxy; any port). Slack puts other hosts in
 * `url_private` too (a Google Drive or Dropbox file, one an app added with `files.remote.add`),
 * and the token must never reach them.
 */
export function isSlackFileUrl(url: string, apiHostname: string | undefined): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (apiHostname !== undefined && u.hostname === apiHostname) return true;
  return u.protocol === 'https:' && (u.hostname === 'slack.com' || u.hostname.endsWith('.slack.com'));
}

/**
 * Files a message still lists that Slack no longer serves (their `mode`), as the notice names them:
 * a free workspace's file older than its plan shows, and a deleted file.
 */
const GONE_FILES = new Map([
  ['hidden_by_limit', "a file hidden by this workspace's Slack plan"],
  ['tombstone', 'a deleted file'],
]);

/**
 * `files[]` of a `file_share` message (or a shortcut's message) as platform-free references. A
 * file stored outside Slack (`is_external`, or a URL on another host) gets no URL: it is named
 * as not read, and the token never leaves for its host.
 */
export function slackFiles(files: unknown, apiHostname?: string): AttachmentRef[] {
  if (!Array.isArray(files)) return [];
  return files.slice(0, 20).flatMap((f): AttachmentRef[] => {
    if (!f || typeof f !== 'object') return [];
    const file = f as Record<string, unknown>;
    // A Slack Connect stub files.info did not explain: its kind is unknown, and what the user
    // must read is that it could not be read, not that only text files are sent.
    if (file.file_access === 'check_file_info') return [{ name: 'a shared file', mimetype: 'text/plain' }];
    // Only the ID and mode are left of a file Slack no longer serves: say which kind, not "only text files are sent".
    const gone = typeof file.mode === 'string' ? GONE_FILES.get(file.mode) : undefined;
    if (gone) return [{ name: gone, mimetype: 'text/plain' }];
    const name = typeof file.name === 'string' && file.name ? file.name : typeof file.title === 'string' && file.title ? file.title : 'file';
    const url = typeof file.url_private_download === 'string' ? file.url_private_download : typeof file.url_private === 'string' ? file.url_private : undefined;
    return [
      {
        name,
        ...(typeof file.mimetype === 'string' ? { mimetype: file.mimetype } : {}),
        ...(typeof file.size === 'number' ? { size: file.size } : {}),
        ...(url !== undefined && file.is_external !== true && isSlackFileUrl(url, apiHostname) ? { url } : {}),
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
  /** `files.info` for a file the message carries only as a stub; undefined when Slack refuses it. */
  fileInfo?: (fileId: string, installation?: string) => Promise<unknown>;
  maxBytes: number;
  maxChars: number;
  timeoutMs?: number;
  /** SLACK_API_URL, when set: its hostname serves files too (an emulator), and may get the token. */
  apiUrl?: string | undefined;
  /** Warned once when Slack refuses the bot its files (no `files:read`). */
  logger?: Pick<Logger, 'warn'>;
  /** Downloads (replaceable in tests). @defaultValue downloadText */
  download?: typeof downloadText;
}): SlackFileReader {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const fileInfo = options.fileInfo;
  const apiHostname = options.apiUrl ? new URL(options.apiUrl).hostname : undefined;
  const download = options.download ?? downloadText;
  let warned = false;
  return async (text, files, installation) => {
    // Slack's two answers to a token without files:read: `missing_scope` from files.info, and its
    // sign-in page (HTML, often with status 200) for the download itself.
    let refused = false;
    const info = fileInfo
      ? (id: string) =>
          withTimeout(
            fileInfo(id, installation).catch((err: unknown) => {
              if (slackErrorCode(err) === 'missing_scope') refused = true;
              throw err;
            }),
            timeoutMs,
            () => undefined,
          )
      : undefined;
    const complete = info ? await withFullFileObjects(files, info) : files;
    const read = await readAttachments(text, slackFiles(complete, apiHostname), {
      maxBytes: options.maxBytes,
      maxChars: options.maxChars,
      timeoutMs,
      authHeaders: { authorization: `Bearer ${await options.botToken(installation)}` },
      keepAuthOnRedirect: keepSlackTokenOnRedirect,
      download: async (url: string, o: DownloadOptions) => {
        // A sign-in page from a host the token did not go to (a redirect off Slack) says nothing of the scope.
        let tokenDropped = false;
        const res = await download(url, {
          ...o,
          keepAuthOnRedirect: (target, first) => {
            const keep = o.keepAuthOnRedirect?.(target, first) ?? false;
            if (!keep) tokenDropped = true;
            return keep;
          },
        });
        if (!res.ok && res.reason === 'sign_in_page' && !tokenDropped) refused = true;
        return res;
      },
    });
    if (!refused) return read;
    if (!warned) {
      warned = true;
      options.logger?.warn(
        { scope: FILES_SCOPE, ...(installation ? { installation } : {}) },
        `Slack refused the bot a file (missing_scope, or its sign-in page for the download): the app needs the ${FILES_SCOPE} scope (or its token is no longer valid). Add the scope (it is in the manifest) and reinstall the app; until then files are not sent to the agent`,
      );
    }
    return { ...read, notice: `${read.notice ?? 'Not sent to the agent: the attached files.'} ${NO_FILES_ACCESS}` };
  };
}

/** The scope Slack asks for before it lets an app read files. */
const FILES_SCOPE = 'files:read';

/** Told to the user when Slack would not let the bot read a file at all. */
export const NO_FILES_ACCESS = `Slack did not let this app read files: an admin needs to give it the ${FILES_SCOPE} permission and reinstall it.`;

/**
 * In Slack Connect channels a message's files are stubs (`{ id, file_access: 'check_file_info' }`,
 * no name or URL), and `files.info` has the rest. A stub Slack will not explain stays as it is
 * and is reported as a file that could not be read.
 */
async function withFullFileObjects(files: unknown, info: (fileId: string) => Promise<unknown>): Promise<unknown> {
  if (!Array.isArray(files)) return files;
  return Promise.all(
    files.slice(0, 20).map(async (f: unknown) => {
      const stub = f as { id?: unknown; file_access?: unknown } | null;
      if (!stub || typeof stub !== 'object' || stub.file_access !== 'check_file_info' || typeof stub.id !== 'string') return f;
      const full = await info(stub.id).catch(() => undefined);
      return full && typeof full === 'object' ? full : f;
    }),
  );
}
