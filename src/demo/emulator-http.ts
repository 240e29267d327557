import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FailureSpec } from './emulator-faults.js';

/** Largest request body the emulator reads. */
export const MAX_BODY_BYTES = 1_000_000;

export class BodyTooLarge extends Error {}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  send(res, status, JSON.stringify(body), { 'content-type': 'application/json; charset=utf-8', ...headers });
}

export function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

/** Answers with a configured failure: JSON, text/HTML or an empty body, with an optional Retry-After. */
export function sendFailure(res: ServerResponse, spec: FailureSpec): void {
  const headers: Record<string, string> = { ...spec.headers };
  if (spec.retryAfter !== undefined) headers['retry-after'] = String(spec.retryAfter);
  let body = '';
  if (typeof spec.body === 'string') {
    body = spec.body;
    headers['content-type'] = spec.contentType ?? (/^\s*</.test(body) ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8');
  } else if (spec.body !== undefined) {
    body = JSON.stringify(spec.body);
    headers['content-type'] = spec.contentType ?? 'application/json; charset=utf-8';
  } else if (spec.contentType) {
    headers['content-type'] = spec.contentType;
  }
  send(res, spec.status, body, headers);
}

/** True when every `name=value` pair of the configured cookie is among the request's cookies. */
export function cookieMatches(header: string | undefined, configured: string | undefined): boolean {
  if (!header || !configured) return false;
  if (header === configured) return true;
  const pairs = (s: string) =>
    s
      .split(';')
      .map((p) => p.trim())
      .filter(Boolean);
  const sent = new Set(pairs(header));
  const wanted = pairs(configured);
  return wanted.length > 0 && wanted.every((p) => sent.has(p));
}

/** The bearer token of an Authorization header, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return match?.[1]?.trim();
}

/** Streams a 200 JSON body of about `bytes` bytes in chunks, minding backpressure; stops if the client goes away. */
export async function sendHuge(res: ServerResponse, bytes: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  const chunk = Buffer.alloc(64 * 1024, 'a');
  let sent = 0;
  res.write('{"messageId":"msg_huge","response":"');
  while (sent < bytes && !res.destroyed) {
    const ok = res.write(chunk);
    sent += chunk.length;
    if (!ok) await drainedOrClosed(res);
  }
  if (!res.destroyed) res.end('"}');
}

/** Resolves on the response's next 'drain' or its 'close', and leaves no listener behind. */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
