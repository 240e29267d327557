/**
 * The floor of the Slack events path: node:http that checks Slack's v0 signature, answers
 * 200 at once and then adds a bare BullMQ job, which is what Bolt does with
 * processBeforeResponse off, without Express, Bolt or the bridge.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ready } from '../lib/ipc.js';
import { BENCH_QUEUE, type FloorJob } from './floor-job.js';
import { serveProbesUntilStop } from './probe.js';

const secret = process.env.SLACK_SIGNING_SECRET ?? '';
const connection = new Redis(process.env.REDIS_URL ?? '', { maxRetriesPerRequest: null });
const queue = new Queue<FloorJob>(BENCH_QUEUE, { connection, prefix: process.env.QUEUE_PREFIX ?? '' });

function verified(timestamp: string | undefined, signature: string | undefined, body: string): boolean {
  if (!timestamp || !signature || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`);
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString();
    const ts = req.headers['x-slack-request-timestamp'];
    const sig = req.headers['x-slack-signature'];
    if (!verified(typeof ts === 'string' ? ts : undefined, typeof sig === 'string' ? sig : undefined, body)) {
      res.writeHead(401).end();
      return;
    }
    const envelope = JSON.parse(body) as { event: { channel: string; ts: string; text: string } };
    res.writeHead(200).end();
    const e = envelope.event;
    void queue
      .add('chat', { messageId: `${e.channel}:${e.ts}`, channelId: e.channel, instanceId: 'demo-helper', text: e.text })
      .catch((err: Error) => console.error(`floor enqueue failed: ${err.message}`));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const address = server.address();

serveProbesUntilStop(
  () => {
    server.closeAllConnections();
    server.close();
  },
  () => queue.close(),
  () => connection.quit(),
);
ready({ httpPort: typeof address === 'object' && address ? address.port : 0 });
