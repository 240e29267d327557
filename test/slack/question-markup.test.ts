import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, say, startSlackBridge, W, type SlackHarness } from './harness.js';

/** What the agent reads of Slack's markup in a question: names, not member IDs. */
describe('Slack: mentions in a question', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http', agent: { reply: (_id, message) => `echo: ${message}` } });
  });
  afterAll(async () => h?.close());

  const asked = async (m: { ts: string }) => {
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 15_000);
    return chatCalls(h).map((c) => (c.json as { message?: string }).message ?? '');
  };

  it('a person mentioned by ID reaches the agent by name; a user group and a broadcast keep one @', async () => {
    const m = await say(h, { channel: W.general, text: `${botMention(h)} what did <@${W.admin}> ask <!subteam^S0123|@devs> and <!here> in <#C0GENERAL|general>?` });
    expect(await asked(m)).toContain('what did @Ada Admin ask @devs and @here in #general?');
  });

  it('a message with rich text blocks and no text is read from its blocks (not answered with the "mention me" hint)', async () => {
    const bot = h.slack.identity.botUserId;
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: '' });
    const blocks = [
      {
        type: 'rich_text',
        elements: [
          { type: 'rich_text_section', elements: [{ type: 'user', user_id: bot }, { type: 'text', text: ' what is 2+2 for ' }, { type: 'user', user_id: W.admin }, { type: 'text', text: ' & <you>?' }] },
          { type: 'rich_text_list', style: 'bullet', elements: [{ type: 'rich_text_section', elements: [{ type: 'link', url: 'https://example.com', text: 'a link' }] }] },
          { type: 'rich_text_preformatted', elements: [{ type: 'text', text: 'x = 1' }] },
        ],
      },
    ];
    for (const event of [m.mention, m.message]) await h.to.event({ ...event, text: '', blocks });
    const asked = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 15_000);
    expect(asked.params.text).not.toMatch(/Mention me/);
    expect(chatCalls(h).map((c) => (c.json as { message?: string }).message)).toContain('what is 2+2 for @Ada Admin & <you>?\n• a link (https://example.com)\n```\nx = 1\n```');
  });

  it('a person Slack cannot name just now stays as the ID, and the question is still answered', async () => {
    h.slack.fail('users.info', { error: 'ratelimited', retryAfterSeconds: 5 });
    const m = await say(h, { channel: W.general, text: `${botMention(h)} ping <@${W.owner}> please` });
    expect(await asked(m)).toContain(`ping @${W.owner} please`);
  });
});
