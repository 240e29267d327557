import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/** Slackbot (a reminder, an auto-response) posts as user USLACKBOT without a bot_id: a bot, never answered. */
describe('Slackbot', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('is not answered when it mentions the bot (dropped as a bot, no agent call)', async () => {
    const ts = `${Math.floor(Date.now() / 1000)}.000777`;
    const text = `${botMention(h)} Reminder: ask the agent about the release`;
    const event = { type: 'message', channel: W.general, channel_type: 'channel', user: 'USLACKBOT', text, ts, event_ts: ts, team: 'T0EMU' };
    expect((await h.to.event(event)).status).toBe(200);
    expect((await h.to.event({ ...event, type: 'app_mention' })).status).toBe(200);
    await until(() => logLines(h, /./).some((l) => l.reason === 'bot' && String(l.messageId ?? '').endsWith(ts)), 'dropped as a bot');
    await new Promise((r) => setTimeout(r, 500));
    expect(chatCalls(h).filter((c) => JSON.stringify(c.json).includes('ask the agent about the release'))).toEqual([]);
    expect(h.slack.callsOf('chat.postMessage', (c) => c.params.thread_ts === ts)).toEqual([]);
  });
});
