import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebClient } from '@slack/web-api';
import { startSlackEmulator, MANIFEST_SCOPES } from '../emulators/slack/index.js';
import { chatCalls, startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * "Ask the agent" where the bot could not post the answer (a DM between two people, a bound
 * channel it is not a member of): the asker is told so ephemerally through the shortcut's
 * response_url, and the agent is not called (it would be billed and nobody would hear it).
 */
describe.each(['http', 'socket'] as const)('"Ask the agent" where the bot cannot post, over %s', (mode) => {
  const peerDm = mode === 'http' ? 'D0PEERHT1' : 'D0PEERSO1';
  const notMember = mode === 'http' ? 'C0NOTMEH1' : 'C0NOTMES1';
  const ownDm = mode === 'http' ? 'D0OWNDH01' : 'D0OWNDS01';
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({
      mode,
      emulator: { channels: [{ id: peerDm, member: false }, { id: notMember, member: false }, { id: ownDm, user: W.user }] },
      env: { BINDINGS: `slack:${W.general}=demo-helper,slack:dm=demo-helper,slack:${notMember}=demo-helper` },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);

  async function ask(channel: string, user: string, text: string) {
    const m = h.slack.userMessage({ channel, user: W.admin, text });
    const shortcut = h.slack.messageShortcut({ user, channel, messageTs: m.ts, callbackId: 'ask_agent' });
    expect((await h.to.interaction(shortcut)).acked).toBe(true);
    return { m, responseUrlId: String(shortcut.response_url).split('/').at(-1) };
  }

  it.each([
    ['a DM between two people', () => peerDm, /can't post in this conversation/],
    ['a bound channel the bot is not a member of', () => notMember, /not a member of this channel/],
  ])('in %s: answers ephemerally and calls no agent', async (_what, channelOf, words) => {
    const channel = channelOf();
    const text = `can you answer in ${channel}?`;
    const { responseUrlId } = await ask(channel, W.user, text);
    const e = await h.slack.waitForCall('response_url', (c) => c.response.id === responseUrlId, 15_000);
    expect(e.params.response_type).toBe('ephemeral');
    expect(e.params.text).toMatch(words);
    // Give a wrongly queued job time to reach the agent.
    await new Promise((r) => setTimeout(r, 1500));
    expect(chatCalls(h).filter((c) => messageOf(c).includes(text))).toEqual([]);
    expect(h.slack.callsOf('chat.postMessage', (c) => c.params.channel === channel)).toEqual([]);
  });

  it("in the bot's own DM with the asker: answered in the message's thread", async () => {
    const text = `please answer in my own DM (${mode})`;
    const { m } = await ask(ownDm, W.user, text);
    const answer = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === ownDm && c.params.thread_ts === m.ts, 30_000);
    expect(answer.params.text).toContain(text);
  });

  it('when Slack rate-limits the check: goes ahead as before (a check that could not be made stops no question)', async () => {
    h.slack.fail('conversations.info', { error: 'ratelimited', retryAfterSeconds: 1 });
    const text = `checked under a rate limit (${mode})`;
    const { m } = await ask(W.general, W.user, text);
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 30_000);
    expect(chatCalls(h).filter((c) => messageOf(c).includes(text))).toHaveLength(1);
  });
});

describe('Slack emulator: posting where the bot is not, and conversations.info', () => {
  it('refuses as Slack does: not_in_channel for a channel it is not in, channel_not_found for others’ DMs and private channels', async () => {
    const slack = await startSlackEmulator({
      channels: [{ id: 'C0OUT0001', member: false }, { id: 'D0OTHERS1', member: false }, { id: 'G0PRIV001', member: false }, { id: 'D0MINE001', user: 'U0UMA0001' }],
    });
    try {
      const client = new WebClient(slack.identity.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
      await expect(client.chat.postMessage({ channel: 'C0OUT0001', text: 'x' })).rejects.toMatchObject({ data: { error: 'not_in_channel' } });
      await expect(client.chat.postMessage({ channel: 'D0OTHERS1', text: 'x' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
      await expect(client.chat.postMessage({ channel: 'G0PRIV001', text: 'x' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
      await expect(client.conversations.info({ channel: 'D0OTHERS1' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
      await expect(client.conversations.info({ channel: 'G0PRIV001' })).rejects.toMatchObject({ data: { error: 'channel_not_found' } });
      expect((await client.conversations.info({ channel: 'C0OUT0001' })).channel).toMatchObject({ id: 'C0OUT0001', is_member: false, is_im: false });
      expect((await client.conversations.info({ channel: 'D0MINE001' })).channel).toMatchObject({ id: 'D0MINE001', is_im: true, user: 'U0UMA0001' });
    } finally {
      await slack.close();
    }
  });

  it('answers missing_scope for conversations.info without the conversation kind’s read scope', async () => {
    const slack = await startSlackEmulator({ scopes: MANIFEST_SCOPES.filter((s) => s !== 'im:read') });
    try {
      const client = new WebClient(slack.identity.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
      await expect(client.conversations.info({ channel: 'D0SCOPE01' })).rejects.toMatchObject({ data: { error: 'missing_scope', needed: 'im:read' } });
    } finally {
      await slack.close();
    }
  });
});
