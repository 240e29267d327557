import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendHuge } from '../../src/demo/emulator-http.js';

const servers: Array<ReturnType<typeof createServer>> = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve())))));
});

/**
 * A local server whose one route streams `bytes` with sendHuge; `finished` gives the most
 * 'drain' and 'close' listeners its response had at once while streaming.
 */
async function hugeServer(bytes: number): Promise<{ url: string; finished: Promise<{ drain: number; close: number }> }> {
  let finish: (most: { drain: number; close: number }) => void = () => {};
  const finished = new Promise<{ drain: number; close: number }>((resolve) => (finish = resolve));
  const server = createServer((_req, res: ServerResponse) => {
    const most = { drain: 0, close: 0 };
    res.on('newListener', (event: string | symbol) => {
      if (event === 'drain' || event === 'close') most[event] = Math.max(most[event], res.listenerCount(event) + 1);
    });
    void sendHuge(res, bytes).then(() => finish(most));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, finished };
}

describe('sendHuge (the demo agent emulator\'s oversized answer)', () => {
  it('streams the whole body to a slow reader and leaves no drain or close listener per pause behind', async () => {
    const bytes = 8 * 1024 * 1024;
    const { url, finished } = await hugeServer(bytes);
    const received = await new Promise<number>((resolve, reject) => {
      request(url, (res) => {
        let n = 0;
        // Read in small pauses so the server meets backpressure many times over.
        res.on('data', (chunk: Buffer) => {
          n += chunk.length;
          res.pause();
          setTimeout(() => res.resume(), 1);
        });
        res.on('end', () => resolve(n));
        res.on('error', reject);
      })
        .on('error', reject)
        .end();
    });
    const most = await finished;
    expect(received).toBeGreaterThanOrEqual(bytes);
    // Before, every pause left a 'close' listener behind (Node warned past ten).
    expect(most.drain).toBe(1);
    expect(most.close).toBeLessThanOrEqual(3);
  }, 60_000);
});
