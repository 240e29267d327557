import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { SHARED_REDIS } from './redis-cleanup.js';

/** A TCP proxy in front of the shared Redis whose client-to-Redis direction can be held. */
export interface RedisStallProxy {
  /** `redis://` URL of the proxy (same database as the shared Redis). */
  url: string;
  /** Holds every command sent from now on (Redis looks stalled to the bridge alone). */
  stall(): void;
  /**
   * Lets commands through until one whose bytes match `pattern` has gone, then stalls (a moment
   * between two commands made as wide as the test needs); resolves once it has.
   */
  stallAfter(pattern: RegExp): Promise<void>;
  /** Sends the held commands, in order, and lets new ones through. */
  resume(): void;
  /**
   * Redis gone for this bridge: every connection is dropped (held commands with it, unsent) and
   * new ones are refused (nothing listens on the port), until {@link restore}.
   */
  cut(): void;
  /** Accepts connections again after {@link cut}, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Stalls Redis for one bridge without touching the Redis other test files share (a `CLIENT PAUSE`
 * would stall them all).
 */
export async function startRedisStallProxy(): Promise<RedisStallProxy> {
  const upstream = new URL(SHARED_REDIS);
  let stalled = false;
  let trigger: { pattern: RegExp; stalled: () => void } | undefined;
  let listening = true;
  const held: Array<{ to: Socket; chunk: Buffer }> = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const redis = createConnection({ host: upstream.hostname, port: Number(upstream.port || 6379) });
    for (const s of [client, redis]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        redis.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (stalled) return void held.push({ to: redis, chunk });
      redis.write(chunk);
      if (trigger?.pattern.test(chunk.toString('latin1'))) {
        stalled = true;
        trigger.stalled();
        trigger = undefined;
      }
    });
    redis.on('data', (chunk) => client.write(chunk));
    client.on('close', () => redis.destroy());
    redis.on('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}${upstream.pathname}`,
    stall: () => {
      stalled = true;
    },
    stallAfter: (pattern) => new Promise<void>((resolve) => (trigger = { pattern, stalled: resolve })),
    resume: () => {
      stalled = false;
      for (const { to, chunk } of held.splice(0)) if (to.writable) to.write(chunk);
    },
    cut: () => {
      if (!listening) return;
      listening = false;
      held.length = 0;
      server.close();
      for (const s of sockets) s.destroy();
    },
    restore: async () => {
      if (listening) return;
      listening = true;
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      if (!listening) return;
      listening = false;
      server.close();
      await once(server, 'close');
    },
  };
}
