import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SlackState } from './state.js';

/** A file uploaded to the emulated workspace. */
export interface EmulatedFile {
  name: string;
  mimetype: string;
  content: string | Buffer;
}

/**
 * Slack's file host (files.slack.com) on its own 127.0.0.1 port: `url_private_download`
 * answers the file for the bot token and, like Slack, an HTML sign-in page with status 200
 * for a missing or wrong token. Records who downloaded what, with which Authorization.
 */
export async function startFileHost(state: SlackState) {
  const files = new Map<string, EmulatedFile & { team: string }>();
  /** Like Slack: the bot token of the file's own workspace (the single-workspace token, or that workspace's installation). */
  const mayRead = (authorization: string | undefined, team: string | undefined) => {
    const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    if (!token) return false;
    if (token === state.identity.botToken) return team === undefined || team === state.identity.teamId;
    const install = state.oauth?.installFor(token);
    return install !== undefined && (team === undefined || install.teamId === team);
  };
  const downloads: Array<{ path: string; authorization?: string }> = [];
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    downloads.push({ path, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    const file = files.get(path);
    if (!mayRead(req.headers.authorization, file?.team)) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end('<!DOCTYPE html><html><body>Sign in to Slack</body></html>');
    }
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('file_not_found');
    }
    const body = typeof file.content === 'string' ? Buffer.from(file.content) : file.content;
    res.writeHead(200, { 'content-type': file.mimetype, 'content-length': String(body.length) });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    downloads,
    /** Stores a file and returns it as it appears in a message's `files[]`. */
    add(file: EmulatedFile, team: string = state.identity.teamId): Record<string, unknown> {
      const id = state.nextId('F');
      const path = `/files-pri/${team}-${id}/download/${encodeURIComponent(file.name)}`;
      files.set(path, { ...file, team });
      const size = typeof file.content === 'string' ? Buffer.byteLength(file.content) : file.content.length;
      return {
        id,
        name: file.name,
        title: file.name,
        mimetype: file.mimetype,
        filetype: file.name.split('.').pop() ?? '',
        size,
        url_private: `${base}${path.replace('/download/', '/')}`,
        url_private_download: `${base}${path}`,
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
