import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/** What the front door answers itself; `undefined` passes the request on to the emulator. */
export type Answer = { status: number; body: unknown } | undefined;

export interface FrontDoor {
  /** For DISCORD_API_URL. */
  apiUrl: string;
  /** `METHOD /path` (version removed) of every request, answered here or passed on. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A REST front for the Discord emulator that can answer chosen requests itself (an outage of
 * `GET /gateway/bot`, a different gateway URL) and forwards the rest, over real sockets.
 */
export async function startFrontDoor(emulatorApiUrl: string, answer: (method: string, path: string) => Answer): Promise<FrontDoor> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://front');
      const path = url.pathname.replace(/^\/api(\/v\d+)?/, '');
      const method = req.method ?? 'GET';
      requests.push(`${method} ${path}`);
      const own = answer(method, path);
      if (own) {
        res.writeHead(own.status, { 'content-type': 'application/json' }).end(JSON.stringify(own.body));
        return;
      }
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k))) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${emulatorApiUrl}${url.pathname.replace(/^\/api/, '')}${url.search}`, { method, headers, body })
        .then(async (r) => {
          res.writeHead(r.status, Object.fromEntries(r.headers)).end(Buffer.from(await r.arrayBuffer()));
        })
        .catch((err: unknown) => res.writeHead(502).end(String(err)));
    });
  });
  const port = await listen(server);
  return { apiUrl: `http://127.0.0.1:${port}/api`, requests, close: () => closeServer(server) };
}

/** A gateway that says HELLO and closes every IDENTIFY with `code` (4004, 4011…), as Discord does. */
export async function startClosingGateway(code: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 }, s: null, t: null }));
    ws.on('message', (data) => {
      const payload = JSON.parse(String(data)) as { op?: number };
      if (payload.op === 2) ws.close(code, 'closed by the test gateway');
    });
  });
  const port = await listen(server);
  return {
    url: `ws://127.0.0.1:${port}`,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await closeServer(server);
    },
  };
}

/** `GET /gateway/bot`'s answer pointing at `url` (one shard, one IDENTIFY at a time). */
export const gatewayBot = (url: string): Answer => ({
  status: 200,
  body: { url, shards: 1, session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 } },
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
