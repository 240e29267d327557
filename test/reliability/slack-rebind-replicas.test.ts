import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, W, type SlackHarness, startSlackBridge } from '../slack/harness.js';
import type { SlackTransport } from '../emulators/slack/index.js';
import { until, watchProcessErrors } from './support/guards.js';
import { startIngressReplica, type IngressReplica } from './support/ingress-replicas.js';

/**
 * Issue 15's binding cache across processes: an admin rebinds a channel through one ingress
 * replica and the next message reaches the other replica, which had the old binding cached. It
 * must go to the new instance (each replica drops its cached entry on the bind's announcement),
 * and after an unbind through the second replica, the first one must not call the agent.
 */
const guard = watchProcessErrors();
afterAll(() => guard.stop());

describe('Slack: a rebind through one ingress replica, the next message at the other', () => {
  let h: SlackHarness;
  const replicas: IngressReplica[] = [];
  let to: SlackTransport[];
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http', env: { ROLE: 'worker', LOG_LEVEL: 'warn' }, agent: { reply: (id, m) => `${id}: ${/q\d+/.exec(m)?.[0]}` } });
    const id = h.slack.identity;
    const env = {
      AGENT_API_BASE_URL: h.agent.baseUrl,
      AGENT_API_KEY: h.agent.apiKey,
      SLACK_BOT_TOKEN: id.botToken,
      SLACK_SIGNING_SECRET: id.signingSecret,
      SLACK_API_URL: h.slack.apiUrl,
      QUEUE_PREFIX: h.prefix,
      BINDINGS: `slack:${W.general}=demo-helper`,
      SLACK_ADMIN_USER_IDS: W.admin,
      LOG_LEVEL: 'warn',
    };
    for (let i = 0; i < 2; i++) replicas.push(await startIngressReplica(env));
    to = replicas.map((r) => h.slack.http(`http://127.0.0.1:${r.port}/slack/events`));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.kill9()));
    await h?.close();
  });

  let n = 0;
  /** A mention in #general delivered (both of its events) to one replica. */
  async function ask(replica: number, q: string) {
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} ${q}` });
    for (const event of [m.mention, m.message]) expect((await to[replica]!.event(event, { eventId: `EvRB${++n}` })).status).toBe(200);
    return m;
  }
  const answer = (ts: string) =>
    until(() => h.slack.thread(W.general, ts).find((x) => x.user === h.slack.identity.botUserId && x.ts !== ts)?.text, `the answer to ${ts}`, 30_000);
  async function admin(replica: number, text: string) {
    const ack = await to[replica]!.command({ text, user: W.admin, channel: W.general });
    const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 30_000);
    return call.params.blocks ?? call.params.text ?? '';
  }
  const askedOf = (q: string) => chatCalls(h).filter((c) => new RegExp(`\\b${q}\\b`).test((c.json as { message?: string }).message ?? '')).map((c) => c.instanceId);

  it('the replica that cached the old binding sends the next message to the new instance', async () => {
    expect(await answer((await ask(1, 'q1')).ts)).toBe('demo-helper: q1'); // replica 1 caches demo-helper

    expect(await admin(0, 'bind demo-poet')).toContain('This channel now talks to');
    const q2 = await ask(1, 'q2');
    expect(await answer(q2.ts)).toBe('demo-poet: q2');
    expect(askedOf('q2')).toEqual(['demo-poet']);

    expect(await admin(1, 'unbind')).toContain('no longer talks to');
    const q3 = await ask(0, 'q3');
    expect(await answer(q3.ts)).toMatch(/isn't connected to an agent/);
    expect(askedOf('q3')).toEqual([]);
    expect(guard.errors).toEqual([]);
  }, 60_000);
});
