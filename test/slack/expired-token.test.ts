import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, installWorkspace, startAddToSlackBridge, until, type SlackHarness } from './harness.js';

/**
 * "Add to Slack" with token rotation, when Slack refuses the refresh: Slack's installer carries
 * on with the expired token. The bridge must not bill the agent for a message whose answer it
 * could never post, and must say which workspace to reinstall.
 */
const TEAM = { teamId: 'TEXPIRE01', channel: 'CEXPIRE01' };

describe('Add to Slack: a bot token that expired and could not be refreshed', () => {
  let h: SlackHarness;

  beforeAll(async () => {
    h = await startAddToSlackBridge({
      rotateAfterSeconds: 2,
      env: { BINDINGS: `slack:${TEAM.channel}=demo-helper` },
      agent: { reply: (_id, m) => `echo: ${m}` },
    });
    expect((await installWorkspace(h, TEAM.teamId)).done.status).toBe(200);
  }, 60_000);
  afterAll(async () => h?.close());

  it('drops its messages without calling the agent, and names the workspace to reinstall', async () => {
    // From now on Slack refuses every refresh; the token lapses after its 2 s.
    h.slack.oauth!.refuseRefresh = true;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    for (const text of ['after expiry', 'after expiry again']) {
      const m = h.slack.userMessage({ channel: TEAM.channel, user: 'UUSER0001', text: `${botMention(h)} ${text}`, team: TEAM.teamId });
      expect((await h.to.event(m.mention, { team: { teamId: TEAM.teamId } })).status).toBe(200);
    }
    await until(() => h.logs.lines.find((l) => l.includes('reinstall the app in that workspace') && l.includes(TEAM.teamId)), 'the error naming the workspace');
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(h.agent.chatCalls()).toEqual([]);
    // Once per workspace, not per message.
    expect(h.logs.lines.filter((l) => l.includes('reinstall the app in that workspace'))).toHaveLength(1);
  }, 30_000);
});
