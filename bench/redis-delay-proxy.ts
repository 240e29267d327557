/**
 * A TCP proxy in front of Redis that holds every chunk for a fixed time each way, so the bench
 * can be run as if Redis were across a network (loopback answers in microseconds; a managed
 * Redis in the same region, in a few hundred). Each round trip then costs what it costs users:
 * latency, not CPU.
 *
 *   npx tsx bench/redis-delay-proxy.ts 6391 0.5 &     # listen on 6391, add 0.5 ms each way
 *   REDIS_URL=redis://127.0.0.1:6391 BENCH_ONLY=latency npm run bench
 *
 * Order is kept per direction (Node runs timers of equal duration in the order they were set).
 * Upstream is REDIS_URL's host and port (default 127.0.0.1:6379).
 */
import { createConnection, createServer, type Socket } from 'node:net';

const port = Number(process.argv[2] ?? 6391);
const delayMs = Number(process.argv[3] ?? 0.5);
if (!Number.isFinite(port) || !Number.isFinite(delayMs) || delayMs < 0) {
  console.error('usage: redis-delay-proxy.ts <port> <delay ms each way>');
  process.exit(2);
}
const upstream = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

function relay(from: Socket, to: Socket): void {
  from.on('data', (chunk) => {
    setTimeout(() => to.writable && to.write(chunk), delayMs);
  });
  from.on('close', () => setTimeout(() => to.destroy(), delayMs));
  from.on('error', () => to.destroy());
}

createServer((client) => {
  client.setNoDelay(true);
  const server = createConnection({ host: upstream.hostname, port: Number(upstream.port || 6379) });
  server.setNoDelay(true);
  relay(client, server);
  relay(server, client);
}).listen(port, '127.0.0.1', () => {
  console.log(`redis-delay-proxy: 127.0.0.1:${port} → ${upstream.hostname}:${upstream.port || 6379}, +${delayMs} ms each way`);
});
