import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, W, type SlackHarness, startSlackBridge } from '../slack/harness.js';
import type { SlackTransport } from '../emulators/slack/index.js';
import { until, watchProcessErrors } from './support/guards.js';
import { startIngressReplica, type IngressReplica } from './support/ingress-replicas.js';

/**
 * Issue 17, ingress replicas: two `ROLE=ingress` processes take Slack's deliveries (over HTTP
 * with no balancer in front, or each holding its own Socket Mode connection); this process is
 * the worker. Slack sends every event twice (app_mention and message) and redelivers to
 * whichever replica it reaches: each message is still one job, one agent call, one answer.
 */
const guard = watchProcessErrors();
afterAll(() => guard.stop());

interface Rig {
  h: SlackHarness;
  replicas: IngressReplica[];
  close(): Promise<void>;
}

async function startRig(mode: 'http' | 'socket'): Promise<Rig> {
  // This process only answers; the two children only take deliveries.
  const h = await startSlackBridge({ mode, env: { ROLE: 'worker', LOG_LEVEL: 'warn' }, agent: { reply: (_id, m) => `echo: ${m}` } });
  const id = h.slack.identity;
  const env = {
    AGENT_API_BASE_URL: h.agent.baseUrl,
    SLACK_BOT_TOKEN: id.botToken,
    ...(mode === 'socket' ? { SLACK_APP_TOKEN: id.appToken } : { SLACK_SIGNING_SECRET: id.signingSecret }),
    SLACK_API_URL: h.slack.apiUrl,
    QUEUE_PREFIX: h.prefix,
    BINDINGS: `slack:${W.general}=demo-helper,slack:dm=demo-helper`,
    LOG_LEVEL: 'debug',
  };
  const replicas: IngressReplica[] = [];
  try {
    for (let i = 0; i < 2; i++) replicas.push(await startIngressReplica(env));
    if (mode === 'socket') await until(() => h.slack.socket.openConnections === 2, 'both replicas connected over Socket Mode', 20_000);
  } catch (err) {
    await Promise.all(replicas.map((r) => r.kill9()));
    await h.close();
    throw err;
  }
  return {
    h,
    replicas,
    async close() {
      await Promise.all(replicas.map((r) => r.kill9()));
      await h.close();
    },
  };
}

/** Every delivery was looked at: all but the first of each message were seen as repeats. */
const repeatsSeen = (rig: Rig, messageId: string) =>
  rig.replicas.flatMap((r) => r.logs(/already handled/)).filter((l) => l.messageId === messageId).length;

/** The bot's answers in a thread, once the worker removed its working reaction. */
async function answersTo(rig: Rig, ts: string) {
  await rig.h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === ts, 30_000);
  return rig.h.slack.thread(W.general, ts).filter((x) => x.user === rig.h.slack.identity.botUserId && x.ts !== ts);
}

describe('Slack over HTTP: two ingress replicas, no balancer', () => {
  let rig: Rig;
  let toReplica: SlackTransport[];
  beforeAll(async () => {
    rig = await startRig('http');
    toReplica = rig.replicas.map((r) => rig.h.slack.http(`http://127.0.0.1:${r.port}/slack/events`));
  }, 90_000);
  afterAll(() => rig?.close());

  it('the same signed deliveries sent to each replica at once are one job, one billed call, one answer', async () => {
    const { h } = rig;
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} replicas over http` });
    // Both events of the message reach both replicas together (the second copy as Slack's retry).
    const deliveries = await Promise.all(
      [m.mention, m.message].flatMap((event, n) => toReplica.map((to, replica) => to.event(event, { eventId: `EvHTTP${n}`, ...(replica ? { retryNum: 1 } : {}) }))),
    );
    expect(deliveries.map((d) => d.status)).toEqual([200, 200, 200, 200]);
    const answers = await answersTo(rig, m.ts);
    await until(() => repeatsSeen(rig, `${W.general}:${m.ts}`) === 3, 'every delivery looked at');
    expect(answers.map((x) => x.text)).toEqual(['echo: replicas over http']);
    expect(h.agent.chatCalls().filter((c) => c.message.includes('replicas over http'))).toHaveLength(1);
    // Both replicas took part: the retry was not simply the one that lost the race everywhere.
    expect(rig.replicas.map((r) => r.logs(/already handled/).length).every((n) => n >= 1)).toBe(true);
  }, 60_000);

  it('a mention in an unbound channel, delivered to both replicas, gets one notice', async () => {
    const { h } = rig;
    const m = h.slack.userMessage({ channel: W.free, user: W.user, text: `${botMention(h)} anyone there?` });
    await Promise.all([m.mention, m.message].flatMap((event, n) => toReplica.map((to) => to.event(event, { eventId: `EvFREE${n}` }))));
    await until(() => repeatsSeen(rig, `${W.free}:${m.ts}`) === 3, 'every delivery looked at');
    await until(() => h.slack.posted((c) => c.params.channel === W.free).length > 0, 'the notice');
    expect(h.slack.posted((c) => c.params.channel === W.free)).toHaveLength(1);
    expect(guard.errors).toEqual([]);
  }, 60_000);
});

describe('Socket Mode: two ingress replicas, each with its own connection', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig('socket');
  }, 90_000);
  afterAll(() => rig?.close());

  it('events spread over both connections, and redelivered on the other one, are each handled once', async () => {
    const { h } = rig;
    const texts = ['first over sockets', 'second over sockets', 'third over sockets', 'fourth over sockets'];
    const messages = texts.map((text) => h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${text}` }));
    // Slack picks a connection per envelope; a redelivery (retry_attempt 1) may go to the other.
    await Promise.all(
      messages.flatMap((m, i) =>
        [m.mention, m.message].flatMap((event, n) => [
          h.to.event(event, { eventId: `EvSOCK${i}-${n}`, connection: (i + n) % 2 }),
          h.to.event(event, { eventId: `EvSOCK${i}-${n}`, connection: (i + n + 1) % 2, retryNum: 1, retryReason: 'timeout' }),
        ]),
      ),
    );
    for (const [i, m] of messages.entries()) {
      const answers = await answersTo(rig, m.ts);
      await until(() => repeatsSeen(rig, `${W.general}:${m.ts}`) === 3, `every delivery of message ${i} looked at`);
      expect(answers.map((x) => x.text)).toEqual([`echo: ${texts[i]}`]);
      expect(h.agent.chatCalls().filter((c) => c.message.includes(texts[i]!))).toHaveLength(1);
    }
    // 16 deliveries, 4 firsts: and each replica had firsts of its own (the work was really spread).
    const repeats = rig.replicas.map((r) => r.logs(/already handled/).length);
    expect(repeats[0]! + repeats[1]!).toBe(messages.length * 3);
    expect(repeats.every((n) => n < messages.length * 4 - messages.length)).toBe(true);
    expect(guard.errors).toEqual([]);
  }, 90_000);
});
