import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, installWorkspace, startAddToSlackBridge, type SlackHarness } from './harness.js';

/**
 * "Add to Slack" over a long life: Slack's rotating bot tokens last 12 hours and are refreshed
 * about 2.4 times a day per workspace. Bolt made a WebClient (some 26 KB) for each token a
 * request was authorized with and kept every one for the life of the process.
 */
const TEAMS = ['TROTATE01', 'TROTATE02'];
const CHANNEL = 'CROTATE01';
const ROUNDS = 6;

let h: SlackHarness;
beforeAll(async () => {
  // Every token expires within InstallProvider's 2 h window: each use refreshes it, so each
  // message comes with a new token, as weeks of rotation would.
  h = await startAddToSlackBridge({ rotateAfterSeconds: 3_600, env: { BINDINGS: `slack:${CHANNEL}=demo-helper` }, agent: { reply: (_id, m) => `echo: ${m}` } });
  for (const team of TEAMS) expect((await installWorkspace(h, team)).done.status).toBe(200);
}, 60_000);
afterAll(() => h?.close());

describe('Add to Slack with rotating tokens', () => {
  it('keeps one Bolt client per installation however often its token rotates, and answers every message', async () => {
    for (let n = 0; n < ROUNDS; n++) {
      for (const team of TEAMS) {
        const m = h.slack.userMessage({ channel: CHANNEL, user: 'UUSER0001', text: `${botMention(h)} round ${n} in ${team}`, team });
        expect((await h.to.event(m.mention, { team: { teamId: team } })).status).toBe(200);
        await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts, 30_000);
      }
    }
    const refreshes = h.slack.callsOf('oauth.v2.access', (c) => c.params.grant_type === 'refresh_token' && c.response.ok === true);
    // The tokens did rotate (the ingress's and the worker's uses each refresh).
    expect(refreshes.length).toBeGreaterThanOrEqual(ROUNDS * TEAMS.length);
    expect(h.adapter.boltClients()).toBeLessThanOrEqual(TEAMS.length);
  }, 120_000);
});
