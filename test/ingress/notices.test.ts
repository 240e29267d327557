import { describe, expect, it } from 'vitest';
import { slackPlatform } from '../../adapters/slack/index.js';
import { webPlatform } from '../../adapters/web/index.js';
import { loadTestConfig } from '../support/config.js';
import { DEFAULT_VOCABULARY, platformNotices } from '../../src/ingress/notices.js';

/** Ingress's notices take their words from the platform module's vocabulary, not from its name. */
describe('platform notices', () => {
  it('name the command as the platform spells it', () => {
    const words = platformNotices({ workspace: 'hall', command: '!agent' });
    expect(words.notBound).toBe("This channel isn't connected to an agent yet. An admin can connect one with `!agent bind <instance-id>`.");
    expect(words.noAccount).toMatch(/set one up with `!agent setup`\.$/);
    expect(platformNotices(DEFAULT_VOCABULARY).notBound).toContain('`/agent bind <instance-id>`');
  });

  it("follow SLACK_COMMAND through Slack's vocabulary", () => {
    const config = loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:9/api/v1', AGENT_API_KEY: 'k', SLACK_BOT_TOKEN: 'xoxb-test', SLACK_SIGNING_SECRET: 'signing-secret', SLACK_COMMAND: '/ai' });
    expect(platformNotices(slackPlatform.vocabulary(config)).notBound).toContain('`/ai bind <instance-id>`');
  });

  it("keep the playground's own wording (no mentions; binding from the admin panel)", () => {
    const words = platformNotices(webPlatform.vocabulary(loadTestConfig({ AGENT_API_BASE_URL: 'http://127.0.0.1:9/api/v1', AGENT_API_KEY: 'k' })));
    expect(words).toEqual({
      notBound: 'This channel is not connected to an agent yet. Bind it to an instance in the admin panel.',
      empty: 'Type a question for the agent.',
      noAccount: 'This workspace has no agent account yet. Set its API key first (`/agent setup`).',
    });
  });
});
