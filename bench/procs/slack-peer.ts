/**
 * The peer of scenario 7: the plain bot a team would write without the bridge. A Bolt app
 * (HTTP receiver, signed events, processBeforeResponse off) adds one BullMQ job per
 * app_mention; a BullMQ worker in the same process calls the agent and posts the answer in
 * the thread with Bolt's client. Replies keep per-thread order with an in-process chain per
 * thread (jobs are taken in queue order by this one worker). No exactly-once machinery: no
 * dedup, no fencing, no crash resume. Same agent client settings as the bridge.
 */
import bolt from '@slack/bolt';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { freeLoopbackPort } from '../../src/free-port.js';
import { ready } from '../lib/ipc.js';
import { plainAgentCall, requiredEnv } from './plain-bot.js';
import { serveProbesUntilStop } from './probe.js';

interface PeerJob {
  channel: string;
  threadTs: string;
  text: string;
}

const queueName = 'peer-chat';
const prefix = requiredEnv('QUEUE_PREFIX');
const askAgent = plainAgentCall();
const connection = new Redis(requiredEnv('REDIS_URL'), { maxRetriesPerRequest: null });
const queue = new Queue<PeerJob>(queueName, { connection, prefix });

const port = await freeLoopbackPort();
const app = new bolt.App({
  token: requiredEnv('SLACK_BOT_TOKEN'),
  signingSecret: requiredEnv('SLACK_SIGNING_SECRET'),
  clientOptions: { slackApiUrl: requiredEnv('SLACK_API_URL') },
  port,
});
app.event('app_mention', async ({ event }) => {
  await queue.add('chat', { channel: event.channel, threadTs: event.thread_ts ?? event.ts, text: event.text }, { removeOnComplete: true });
});

const chains = new Map<string, Promise<void>>();
/** Runs `work` after every earlier job of the same thread in this process. */
function inOrder(thread: string, work: () => Promise<void>): Promise<void> {
  const next = (chains.get(thread) ?? Promise.resolve()).then(work, work);
  chains.set(thread, next);
  void next.finally(() => chains.get(thread) === next && chains.delete(thread)).catch(() => undefined);
  return next;
}

const workerConnection = new Redis(requiredEnv('REDIS_URL'), { maxRetriesPerRequest: null });
const worker = new Worker<PeerJob>(
  queueName,
  (job) =>
    inOrder(job.data.threadTs, async () => {
      const response = await askAgent('demo-helper', job.data.text);
      await app.client.chat.postMessage({ channel: job.data.channel, thread_ts: job.data.threadTs, text: response });
    }),
  { connection: workerConnection, prefix, concurrency: Number(requiredEnv('WORKER_CONCURRENCY')) },
);
worker.on('error', (err) => console.error(`peer worker error: ${err.message}`));
await worker.waitUntilReady();
await app.start();

serveProbesUntilStop(
  () => app.stop(),
  () => worker.close(),
  () => queue.close(),
  () => Promise.all([connection.quit(), workerConnection.quit()]),
);
ready({ httpPort: port });
