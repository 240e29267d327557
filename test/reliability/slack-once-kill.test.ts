import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, say, startSlackBridge, W, type SlackHarness } from '../slack/harness.js';
import { until, watchProcessErrors } from './support/guards.js';
import { FAST_TAKEOVER, startWorker, type WorkerProcess } from './support/workers.js';

/**
 * Exactly once at the worst moment, on Slack: a worker process is SIGKILLed after Slack stored
 * its post and before the answer reached it (the emulator holds that answer), and the worker
 * that takes the job over must not say it again. Two posts the reply chunks' metadata lookup
 * did not cover: a give-up notice (the agent refused the message), and a chunk Slack took only
 * without its metadata (it refused the metadata, so the bridge posted the text alone).
 */
const slackWorker = fileURLToPath(new URL('./support/slack-worker-entry.ts', import.meta.url));

let h: SlackHarness | undefined;
let env: Record<string, string>;
const workers: WorkerProcess[] = [];
const guard = watchProcessErrors();

beforeAll(async () => {
  // Ingress only in this process (Bolt over HTTP); worker processes answer.
  h = await startSlackBridge({ mode: 'http', env: { ROLE: 'ingress', LOG_LEVEL: 'warn' }, agent: { reply: (_id, m) => `echo: ${m}` } });
  env = {
    AGENT_API_BASE_URL: h.agent.baseUrl,
    AGENT_API_KEY: h.agent.apiKey,
    AGENT_SESSION_COOKIE: h.agent.sessionCookie,
    SLACK_BOT_TOKEN: h.slack.identity.botToken,
    SLACK_API_URL: h.slack.apiUrl,
    QUEUE_PREFIX: h.prefix,
    // FAST_TAKEOVER: a dead worker's job is taken over within seconds.
    ...FAST_TAKEOVER,
  };
}, 60_000);

afterAll(async () => {
  guard.stop();
  await Promise.all(workers.map((w) => w.kill9()));
  await h?.close();
});

const spawnWorker = async () => {
  const w = await startWorker(env, slackWorker);
  workers.push(w);
  return w;
};

/**
 * Asks `text` in #general with the answer of the post matching `held` held back, SIGKILLs the
 * worker there and starts another; resolves once that one marked the question with `endReaction`.
 */
async function killMidPost(text: string, held: (params: Record<string, string>) => boolean, done: { method: string; name?: string }) {
  const hs = h!;
  const first = await spawnWorker();
  hs.slack.hold('chat.postMessage', { filter: held });
  const m = await say(hs, { channel: W.general, text: `${botMention(hs)} ${text}` });
  const call = await hs.slack.waitForHeld('chat.postMessage', 30_000);
  expect(call.call.params.thread_ts).toBe(m.ts);
  // Slack has the post; the worker never hears so.
  await first.kill9();
  await spawnWorker();
  await hs.slack.waitForCall(done.method, (c) => c.params.timestamp === m.ts && (done.name === undefined || c.params.name === done.name), 30_000);
  await until(async () => {
    const c = await hs.bridge.queue.counts();
    return c.active + c.waiting + c.delayed === 0;
  }, 'queue idle', 15_000);
  // Nothing of this round may answer the next one.
  await Promise.all(workers.splice(0).map((w) => w.kill9()));
  const bot = hs.slack.thread(W.general, m.ts).filter((x) => x.user === hs.slack.identity.botUserId);
  return { bot, calls: hs.agent.chatCalls().filter((c) => c.message.includes(text)) };
}

describe('Slack: a worker SIGKILLed right after Slack stored its post', () => {
  it('a give-up notice is in the thread once, and the agent was asked once', async () => {
    h!.agent.failNext(1, { status: 422, body: { error: 'instance refused the message' } }, { endpoint: 'chat' });
    const { bot, calls } = await killMidPost('refused question', (p) => /\(ref [A-Z2-9]{6}\)/.test(p.text ?? ''), { method: 'reactions.add', name: 'warning' });
    expect(bot).toHaveLength(1);
    expect(bot[0]!.text).toMatch(/\(ref [A-Z2-9]{6}\)$/);
    expect(calls).toHaveLength(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);

  it('a chunk Slack took only without its metadata is in the thread once, and the agent was asked once', async () => {
    // Slack refuses the first post's metadata; the bridge posts the chunk without it (held).
    h!.slack.fail('chat.postMessage', { error: 'metadata_too_large' });
    const { bot, calls } = await killMidPost('metadata question', (p) => p.metadata === undefined && (p.text ?? '').startsWith('echo: metadata'), { method: 'reactions.remove' });
    expect(bot.map((x) => x.text)).toEqual(['echo: metadata question']);
    expect(bot[0]!.metadata).toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);
});
