import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the stand-in received. */
export interface CapturedRequest {
  url: string;
  auth?: string;
  type?: string;
  userAgent?: string;
  body: string;
}

export type Answer = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A stand-in Web API on loopback for tests of an HTTP client itself (not of Slack's behaviour,
 * which is the emulator's): it records every request and answers with whatever `answer` is now.
 */
export interface WebApiCapture {
  /** `http://127.0.0.1:<port>/api/`, as the WebClient wants its base URL. */
  readonly base: string;
  readonly seen: CapturedRequest[];
  answer: Answer;
  close(): Promise<void>;
}

export async function startWebApiCapture(): Promise<WebApiCapture> {
  const capture = {
    seen: [] as CapturedRequest[],
    answer: ((_req, res) => res.end('{}')) as Answer,
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      capture.seen.push({ url: req.url ?? '', auth: req.headers.authorization, type: req.headers['content-type'], userAgent: req.headers['user-agent'], body });
      capture.answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(capture, {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

/** An answer with a JSON body. */
export const jsonAnswer =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
