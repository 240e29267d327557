import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, installWorkspace, startAddToSlackBridge, type SlackHarness } from './harness.js';
import { startIngressReplica, type IngressReplica } from '../reliability/support/ingress-replicas.js';

/**
 * "Add to Slack" with token rotation, several processes: Slack revokes a refresh token once it
 * is used, so when every process (and every concurrent `authorize` within one: Bolt's receiver
 * for each event, the workers for their replies) refreshes the same expiring token at once, all
 * but one refresh are refused and logged as errors. One refresh per installation at a time.
 */
const TEAM = { teamId: 'TREFRESH1', channel: 'CREFRESH1' };
const MESSAGES = 6;
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

let h: SlackHarness;
let replica: IngressReplica;
let redis: Redis;

beforeAll(async () => {
  // This process takes deliveries and answers (ROLE all); the child only takes deliveries.
  h = await startAddToSlackBridge({
    // Installed with a token that expires within InstallProvider's 2 h window: the next use refreshes it.
    rotateAfterSeconds: 3_600,
    encryptionKey: ENCRYPTION_KEY,
    env: { BINDINGS: `slack:${TEAM.channel}=demo-helper` },
    agent: { reply: (_id, m) => `echo: ${m}` },
  });
  redis = new Redis('redis://127.0.0.1:6379');
  expect((await installWorkspace(h, TEAM.teamId)).done.status).toBe(200);
  // Refreshed tokens live Slack's 12 hours: once refreshed, nobody needs to refresh again.
  h.slack.oauth!.app.rotateAfterSeconds = 43_200;
  replica = await startIngressReplica({
    AGENT_API_BASE_URL: h.agent.baseUrl,
    AGENT_API_KEY: h.agent.apiKey,
    SLACK_SIGNING_SECRET: h.slack.identity.signingSecret,
    SLACK_API_URL: h.slack.apiUrl,
    SLACK_CLIENT_ID: h.slack.oauth!.app.clientId,
    SLACK_CLIENT_SECRET: h.slack.oauth!.app.clientSecret,
    SLACK_STATE_SECRET: 'emulated-state-secret-long-enough',
    INSTALLATION_ENCRYPTION_KEY: ENCRYPTION_KEY,
    QUEUE_PREFIX: h.prefix,
    BINDINGS: `slack:${TEAM.channel}=demo-helper`,
    LOG_LEVEL: 'info',
  });
}, 90_000);

afterAll(async () => {
  await replica?.kill9();
  redis?.disconnect();
  await h?.close();
});

describe('Add to Slack with token rotation: two processes, one expiring token', () => {
  it('is refreshed once, with no error, and every message is answered once', async () => {
    const toReplica = h.slack.http(`http://127.0.0.1:${replica.port}/slack/events`);
    const team = { team: { teamId: TEAM.teamId } };
    const messages = Array.from({ length: MESSAGES }, (_, n) =>
      h.slack.userMessage({ channel: TEAM.channel, user: 'UUSER0001', text: `${botMention(h)} question ${n}`, team: TEAM.teamId }),
    );
    // All at once: each message's app_mention to one process and its message event to the other.
    const deliveries = await Promise.all(messages.flatMap((m, n) => (n % 2 ? [h.to.event(m.mention, team), toReplica.event(m.message, team)] : [toReplica.event(m.mention, team), h.to.event(m.message, team)])));
    expect(deliveries.map((d) => d.status)).toEqual(deliveries.map(() => 200));
    for (const m of messages) await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === m.ts, 30_000);

    const refreshes = h.slack.callsOf('oauth.v2.access', (c) => c.params.grant_type === 'refresh_token');
    expect(refreshes.map((c) => c.response.ok)).toEqual([true]);

    // No error at all: neither InstallProvider's refused refresh nor an event acked too late
    // because its authorize waited for another's refresh.
    const errors = (lines: Array<Record<string, unknown>>) => lines.filter((l) => Number(l.level) >= 50).map((l) => l.msg);
    expect(errors(h.logs.matching(/./))).toEqual([]);
    expect(errors(replica.logs(/./))).toEqual([]);

    for (const [n, m] of messages.entries()) {
      const answers = h.slack.thread(TEAM.channel, m.ts).filter((x) => x.user === h.slack.identity.botUserId && x.ts !== m.ts);
      expect(answers.map((x) => x.text)).toEqual([`echo: question ${n}`]);
      expect(h.agent.chatCalls().filter((c) => c.message.includes(`question ${n}`))).toHaveLength(1);
    }
    // The refresh's save released the lock (it was not left to lapse).
    expect(await redis.exists(`${h.prefix}:slack:installation-refresh:team:${TEAM.teamId}`)).toBe(0);
  }, 60_000);
});
