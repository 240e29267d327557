import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery, EventOptions, SlackTransport } from '../emulators/slack/index.js';
import { queueKeys } from '../../src/queue/keys.js';
import { startRedisStallProxy } from '../support/redis-stall-proxy.js';
import { botMention, startSlackBridge, W, type SlackHarness, type SlackMode } from '../slack/harness.js';
import { until, watchProcessErrors } from './support/guards.js';
import { startIngressReplica, type IngressReplica } from './support/ingress-replicas.js';

/**
 * Audit B R2 (and S1): a Slack ingress process killed between claiming a message in Redis and
 * storing it. The claim used to be the hour-long `delivered` mark, so Slack's redelivery of the
 * never-acked event (to the replacement process) was acked as "already handled" and the message
 * was lost without a word; the other event of the pair had been acked as "already handled" too.
 * Now the claim is a lease of seconds: the redelivery takes it once it lapsed, and a delivery
 * that finds it live is not acked, so Slack sends it again.
 *
 * Real `ROLE=ingress` processes (bin-like entry, SIGKILL), the Slack emulator, the real Redis;
 * this process is the worker. Slack's redelivery is modelled as Slack does it: an event not
 * acked is sent again up to 3 times (here `RETRY_GAP_MS` apart; Slack: at once, 1 and 5 minutes).
 */
const guard = watchProcessErrors();
afterAll(() => guard.stop());

const RETRY_GAP_MS = 6_000;
/** The file download the ingress is killed in (the first one only): longer than Slack's 3 s ack budget. */
const SLOW_DOWNLOAD_MS = 6_000;

interface Rig {
  h: SlackHarness;
  env: Record<string, string>;
  /** Slack's transport to a replica (Socket Mode: its connection, the only one open). */
  transportTo(replica: IngressReplica): SlackTransport;
  processes: IngressReplica[];
  close(): Promise<void>;
}

async function startRig(mode: SlackMode): Promise<Rig> {
  // This process only answers; the ingress processes only take deliveries.
  const h = await startSlackBridge({ mode, env: { ROLE: 'worker', LOG_LEVEL: 'warn' }, agent: { reply: (_id, m) => echo(m) } });
  const id = h.slack.identity;
  const env = {
    AGENT_API_BASE_URL: h.agent.baseUrl,
    AGENT_API_KEY: h.agent.apiKey,
    SLACK_BOT_TOKEN: id.botToken,
    ...(mode === 'socket' ? { SLACK_APP_TOKEN: id.appToken } : { SLACK_SIGNING_SECRET: id.signingSecret }),
    SLACK_API_URL: h.slack.apiUrl,
    QUEUE_PREFIX: h.prefix,
    BINDINGS: `slack:${W.general}=demo-helper`,
    LOG_LEVEL: 'debug',
  };
  const processes: IngressReplica[] = [];
  return {
    h,
    env,
    processes,
    transportTo: (replica) => (mode === 'socket' ? h.slack.socketTransport : h.slack.http(`http://127.0.0.1:${replica.port}/slack/events`)),
    async close() {
      await Promise.all(processes.map((p) => p.kill9()));
      await h.close();
    },
  };
}

/** Starts an ingress process; over Socket Mode, resolves once its connection is the only one. */
async function startIngress(rig: Rig, env: Record<string, string> = {}): Promise<IngressReplica> {
  const replica = await startIngressReplica({ ...rig.env, ...env });
  rig.processes.push(replica);
  if (rig.h.mode === 'socket') await until(() => rig.h.slack.socket.openConnections === 1, 'the ingress connected over Socket Mode', 20_000);
  return replica;
}

async function kill(rig: Rig, ...replicas: IngressReplica[]): Promise<void> {
  await Promise.all(replicas.map((r) => r.kill9()));
  if (rig.h.mode === 'socket') await until(() => rig.h.slack.socket.openConnections === 0, 'the killed ingress gone from Socket Mode', 10_000);
}

/** One delivery; a receiver that died on it (HTTP: the connection reset) did not ack it. */
const deliver = (to: SlackTransport, event: Record<string, unknown>, options: EventOptions): Promise<Delivery> =>
  to.event(event, options).catch(() => ({ acked: false, ms: 0 }));

/** Slack's redelivery of an event never acked: up to 3 more times until one is acked. */
async function redeliver(to: SlackTransport, event: Record<string, unknown>, eventId: string): Promise<boolean[]> {
  const acks: boolean[] = [];
  for (let retry = 1; retry <= 3; retry++) {
    const d = await deliver(to, event, { eventId, retryNum: retry, retryReason: 'timeout' });
    acks.push(d.acked);
    if (d.acked) break;
    await new Promise((r) => setTimeout(r, RETRY_GAP_MS));
  }
  return acks;
}

/** The bot's posts in the message's thread after it (an assistant thread holds earlier answers too). */
const botPostsIn = (h: SlackHarness, ts: string, channel: string = W.general, threadTs = ts) =>
  h.slack.thread(channel, threadTs).filter((x) => x.user === h.slack.identity.botUserId && Number(x.ts) > Number(ts));

/** The agent echoes the line of the question that names the case (not the thread transcript nor a file before it). */
const echo = (message: string) => `echo: ${message.split('\n').find((line) => /\b(file|quota|assistant)-(socket|http)\b/.test(line)) ?? message.split('\n')[0]}`;

/** A message as Slack sends it: its events (`app_mention` and `message`, or one), where its answer goes. */
interface SentMessage {
  ts: string;
  events: Array<Record<string, unknown>>;
  channel?: string;
  threadTs?: string;
}

/**
 * After the kill: a replacement ingress, Slack's redeliveries of both events of the message, and
 * what came of it (counted at the emulators once a later message was answered).
 */
async function replaceAndRedeliver(rig: Rig, m: SentMessage, firstAcks: boolean[], tag: string, env: Record<string, string> = {}) {
  const { h } = rig;
  const replacement = await startIngress(rig, env);
  const to = rig.transportTo(replacement);
  const answersTo = () => botPostsIn(h, m.ts, m.channel, m.threadTs);
  // Each event Slack did not get an ack for is sent again, all at once (each on its own schedule).
  const retries = await Promise.all(m.events.map((event, n) => (firstAcks[n] ? Promise.resolve([]) : redeliver(to, event, `Ev${tag}${n}`))));
  await until(() => answersTo().length > 0, 'the answer', 30_000).catch(() => undefined);
  // A later message through the same ingress, answered: anything still on its way has arrived.
  const later = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} a later one` });
  await deliver(to, later.mention, { eventId: `EvLater${later.ts}` });
  await until(() => botPostsIn(h, later.ts).length > 0, 'the later answer', 30_000);
  return {
    retries,
    agentCalls: h.agent.chatCalls().filter((c) => c.message.includes(tag)).length,
    answers: answersTo().map((x) => x.text),
    replacement,
  };
}

describe.each<SlackMode>(['socket', 'http'])('Slack (%s): an ingress killed between claiming a message and storing it', (mode) => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig(mode);
  }, 60_000);
  afterAll(() => rig?.close());

  it('while it downloads the message\'s file: the redelivery is answered, once', async () => {
    const { h } = rig;
    await kill(rig, ...rig.processes);
    const first = await startIngress(rig);
    const to = rig.transportTo(first);
    // Warm up: the bot's identity is known, so the kill below lands well inside the ack's 2 s hold.
    const warm = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} warm up files ${mode}` });
    await deliver(to, warm.mention, { eventId: `EvWarmF${mode}` });
    await until(() => botPostsIn(h, warm.ts).length > 0, 'the warm-up answer', 30_000);
    const tag = `file-${mode}`;
    const file = h.slack.files.add({ name: 'notes.txt', mimetype: 'text/plain', content: 'file body' }, { delayMs: SLOW_DOWNLOAD_MS, delayedDownloads: 1 });
    const path = new URL(file.url_private_download as string).pathname;
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${tag} please read`, files: [file], subtype: 'file_share' });
    const firstDeliveries = [deliver(to, m.mention, { eventId: `Ev${tag}0` }), deliver(to, m.message, { eventId: `Ev${tag}1` })];
    // The claim is taken and the download under way: kill the ingress in that window.
    await until(() => h.slack.files.downloads.some((d) => d.path === path), 'the download started', 15_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(await h.bridge.redis.get(queueKeys(`${h.prefix}:chat`).seen('slack', `${W.general}:${m.ts}`))).not.toBeNull();
    await kill(rig, first);
    const firstAcks = (await Promise.all(firstDeliveries)).map((d) => d.acked);
    const outcome = await replaceAndRedeliver(rig, { ts: m.ts, events: [m.mention, m.message] }, firstAcks, tag);
    console.log(`[claim-kill ${mode} file] first deliveries acked ${JSON.stringify(firstAcks)}, redeliveries acked ${JSON.stringify(outcome.retries)}, agent calls ${outcome.agentCalls}, answers ${JSON.stringify(outcome.answers)}`);
    expect(outcome.agentCalls).toBe(1);
    expect(outcome.answers).toEqual([`echo: ${tag} please read`]);
    // Neither event of the pair was acked while the message was not stored.
    expect(firstAcks).toEqual([false, false]);
    // Slack never gave up on an event: each was acked within its 3 redeliveries.
    expect(outcome.retries.map((acks) => acks.at(-1))).toEqual([true, true]);
    expect(guard.errors).toEqual([]);
  }, 120_000);

  it('with a quota set, while Redis stalls between the claim and the push: the redelivery is answered, once', async () => {
    const { h } = rig;
    await kill(rig, ...rig.processes);
    const proxy = await startRedisStallProxy();
    try {
      const quota = { QUOTA_USER_PER_MINUTE: '100' };
      const first = await startIngress(rig, { ...quota, REDIS_URL: proxy.url });
      const to = rig.transportTo(first);
      // Warm up through the proxy: the bot's identity is known and the ledger's scripts are loaded.
      const warm = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} warm up ${mode}` });
      await deliver(to, warm.mention, { eventId: `EvWarm${mode}` });
      await until(() => botPostsIn(h, warm.ts).length > 0, 'the warm-up answer', 30_000);
      const tag = `quota-${mode}`;
      const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${tag} hello` });
      // The quota branch claims the message (a command naming its seen key); every command after it is held.
      const stalled = proxy.stallAfter(/seen:slack:/);
      const firstDeliveries = [deliver(to, m.mention, { eventId: `Ev${tag}0` }), deliver(to, m.message, { eventId: `Ev${tag}1` })];
      await stalled;
      await kill(rig, first);
      expect(await h.bridge.redis.get(queueKeys(`${h.prefix}:chat`).seen('slack', `${W.general}:${m.ts}`))).not.toBeNull();
      const firstAcks = (await Promise.all(firstDeliveries)).map((d) => d.acked);
      const outcome = await replaceAndRedeliver(rig, { ts: m.ts, events: [m.mention, m.message] }, firstAcks, tag, quota);
      console.log(`[claim-kill ${mode} quota] first deliveries acked ${JSON.stringify(firstAcks)}, redeliveries acked ${JSON.stringify(outcome.retries)}, agent calls ${outcome.agentCalls}, answers ${JSON.stringify(outcome.answers)}`);
      expect(outcome.agentCalls).toBe(1);
      expect(outcome.answers).toEqual([`echo: ${tag} hello`]);
      expect(firstAcks).toEqual([false, false]);
      expect(outcome.retries.map((acks) => acks.at(-1))).toEqual([true, true]);
      expect(guard.errors).toEqual([]);
    } finally {
      proxy.resume();
      await proxy.close();
    }
  }, 120_000);

  // Audit B S1: an assistant thread's message is claimed before anything else is done with it.
  it('in an assistant thread, while Redis stalls between the claim and the push: the redelivery is answered, once', async () => {
    const { h } = rig;
    await kill(rig, ...rig.processes);
    const proxy = await startRedisStallProxy();
    try {
      const first = await startIngress(rig, { REDIS_URL: proxy.url });
      const to = rig.transportTo(first);
      const dm = mode === 'http' ? 'D0CLAIMH1' : 'D0CLAIMS1';
      const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
      expect((await deliver(to, started.event, { eventId: `EvStart${mode}` })).acked).toBe(true);
      await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.channel_id === dm);
      // Warm up through the proxy: the bot's identity is known and the ledger's scripts are loaded.
      const warm = h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text: `warm up ${mode}` });
      await deliver(to, warm.message, { eventId: `EvWarmA${mode}` });
      await until(() => botPostsIn(h, warm.ts, dm, started.threadTs).length > 0, 'the warm-up answer', 30_000);
      const tag = `assistant-${mode}`;
      const m = h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text: `${tag} hello` });
      const stalled = proxy.stallAfter(new RegExp(`seen:slack:${dm}:${m.ts.replace('.', '\\.')}`));
      const firstDelivery = deliver(to, m.message, { eventId: `Ev${tag}0` });
      await stalled;
      await kill(rig, first);
      expect(await h.bridge.redis.get(queueKeys(`${h.prefix}:chat`).seen('slack', `${dm}:${m.ts}`))).not.toBeNull();
      const firstAcks = [(await firstDelivery).acked];
      const outcome = await replaceAndRedeliver(rig, { ts: m.ts, events: [m.message], channel: dm, threadTs: started.threadTs }, firstAcks, tag);
      console.log(`[claim-kill ${mode} assistant] first delivery acked ${JSON.stringify(firstAcks)}, redeliveries acked ${JSON.stringify(outcome.retries)}, agent calls ${outcome.agentCalls}, answers ${JSON.stringify(outcome.answers)}`);
      expect(outcome.agentCalls).toBe(1);
      expect(outcome.answers).toEqual([`echo: ${tag} hello`]);
      expect(firstAcks).toEqual([false]);
      expect(outcome.retries.map((acks) => acks.at(-1))).toEqual([true]);
      expect(guard.errors).toEqual([]);
    } finally {
      proxy.resume();
      await proxy.close();
    }
  }, 120_000);
});
