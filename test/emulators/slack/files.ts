import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SlackState } from './state.js';

/** A file uploaded to the emulated workspace. */
export interface EmulatedFile {
  name: string;
  mimetype: string;
  content: string | Buffer;
}

/**
 * Where `url_private_download` sends the client: nowhere (the file itself), with a 302 to a
 * second Slack origin that still asks for the token (Enterprise Grid's `files-origin.slack.com`),
 * or with a 302 to a host Slack does not own, which must never see the token.
 */
export type FileRedirect = 'none' | 'slack-origin' | 'foreign';

export interface AddFileOptions {
  /** The workspace that owns the file. @defaultValue the emulator's own team */
  team?: string;
  /** @defaultValue 'none' */
  redirect?: FileRedirect;
  /**
   * The message carries only a stub (`file_access: check_file_info`, no URL), as Slack sends
   * files in Slack Connect channels: the full object comes from `files.info`.
   */
  stub?: boolean;
  /**
   * A file Slack no longer serves, carried in messages as its ID and mode alone: `hidden_by_limit`
   * (a free workspace's file older than its plan shows) or `tombstone` (deleted). Its download
   * is gone: the file host answers 404.
   */
  gone?: 'hidden_by_limit' | 'tombstone';
  /** How long the file host takes before it answers a download of this file (a slow link). @defaultValue 0 */
  delayMs?: number;
  /** How many downloads of it are that slow, the first ones; later ones are answered at once. @defaultValue all */
  delayedDownloads?: number;
}

/** Which of the emulated hosts answered a GET. */
export type FileHostName = 'files' | 'files-origin' | 'foreign';

/** One GET on a file host, with the Authorization it carried. */
export interface FileDownload {
  host: FileHostName;
  path: string;
  authorization?: string;
}

/**
 * Slack's file host (files.slack.com) on its own 127.0.0.1 port: `url_private_download`
 * answers the file for the bot token and, like Slack, an HTML sign-in page with status 200
 * for a missing or wrong token. A file added with a redirect is answered with a 302 (after the
 * same token check) to the second origin (another 127.0.0.1 port, standing for
 * files-origin.slack.com) or to the foreign host (127.0.0.2, another hostname); both apply
 * the same token check, so a token that did not follow is a sign-in page and one that
 * followed where it must not is on record. Records who downloaded what, with which Authorization.
 */
export async function startFileHost(state: SlackState) {
  const files = new Map<string, EmulatedFile & { team: string; redirect: FileRedirect; delayMs: number; delayedDownloads: number }>();
  /** Like Slack: the bot token of the file's own workspace (the single-workspace token, or that workspace's installation). */
  const mayRead = (authorization: string | undefined, team: string | undefined) => {
    const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    if (!token) return false;
    // A token without files:read gets the sign-in page too.
    if (token === state.identity.botToken) return state.identity.scopes.includes('files:read') && (team === undefined || team === state.identity.teamId);
    const install = state.oauth?.installFor(token);
    return install !== undefined && (team === undefined || install.teamId === team);
  };
  const downloads: FileDownload[] = [];
  const bases: Partial<Record<FileHostName, string>> = {};

  const answer = (host: FileHostName) => async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    downloads.push({ host, path, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    const file = files.get(path);
    if (file?.delayMs && file.delayedDownloads > 0) {
      file.delayedDownloads--;
      await new Promise((resolve) => setTimeout(resolve, file.delayMs));
    }
    if (!mayRead(req.headers.authorization, file?.team)) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end('<!DOCTYPE html><html><body>Sign in to Slack</body></html>');
    }
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('file_not_found');
    }
    if (host === 'files' && file.redirect !== 'none') {
      res.writeHead(302, { location: `${bases[file.redirect === 'slack-origin' ? 'files-origin' : 'foreign']}${path}` });
      return res.end();
    }
    const body = typeof file.content === 'string' ? Buffer.from(file.content) : file.content;
    res.writeHead(200, { 'content-type': file.mimetype, 'content-length': String(body.length) });
    res.end(body);
  };

  const listen = async (host: FileHostName, address: string): Promise<Server> => {
    const serve = answer(host);
    const server = createServer((req, res) => void serve(req, res));
    await new Promise<void>((r) => server.listen(0, address, r));
    bases[host] = `http://${address}:${(server.address() as AddressInfo).port}`;
    return server;
  };
  // Linux routes all of 127.0.0.0/8 to loopback: 127.0.0.2 is a host with another name.
  const servers = [await listen('files', '127.0.0.1'), await listen('files-origin', '127.0.0.1'), await listen('foreign', '127.0.0.2')];
  const base = bases.files!;
  return {
    downloads,
    /** Where each host listens (`http://127.0.0.x:port`), to build a URL on it. */
    baseOf: (host: FileHostName) => bases[host]!,
    /** Stores a file and returns it as it appears in a message's `files[]`. */
    add(file: EmulatedFile, options: AddFileOptions = {}): Record<string, unknown> {
      const team = options.team ?? state.identity.teamId;
      const id = state.nextId('F');
      const path = `/files-pri/${team}-${id}/download/${encodeURIComponent(file.name)}`;
      files.set(path, { ...file, team, redirect: options.redirect ?? 'none', delayMs: options.delayMs ?? 0, delayedDownloads: options.delayedDownloads ?? Infinity });
      const size = typeof file.content === 'string' ? Buffer.byteLength(file.content) : file.content.length;
      const full = {
        id,
        name: file.name,
        title: file.name,
        mimetype: file.mimetype,
        filetype: file.name.split('.').pop() ?? '',
        size,
        url_private: `${base}${path.replace('/download/', '/')}`,
        url_private_download: `${base}${path}`,
      };
      state.fileInfos.set(id, full);
      if (options.gone) {
        files.delete(path);
        state.fileInfos.delete(id);
        return { id, mode: options.gone };
      }
      return options.stub ? { id, mode: 'file_access', file_access: 'check_file_info', created: 0, timestamp: 0, user: '' } : full;
    },
    close: () =>
      Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      ).then(() => undefined),
  };
}
