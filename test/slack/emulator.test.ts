import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { WebClient } from '@slack/web-api';
import { startSlackEmulator, sendSigned, slackSignature, type SlackEmulator } from '../emulators/slack/index.js';
import { issueTrigger } from '../emulators/slack/payloads.js';

/** The emulator must be as strict as Slack, or the end-to-end tests prove little. */
describe('Slack emulator', () => {
  let slack: SlackEmulator;
  let bot: WebClient;
  const raw = (method: string, body: string, auth?: string) =>
    fetch(`${slack.apiUrl}${method}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) }, body }).then(
      async (r) => ({ status: r.status, json: (await r.json()) as Record<string, unknown>, retryAfter: r.headers.get('retry-after') }),
    );

  beforeAll(async () => {
    slack = await startSlackEmulator({ users: [{ id: 'U0UMA0001', name: 'Uma' }], channels: [{ id: 'C0ARCHIVE', archived: true }] });
    bot = new WebClient(slack.identity.botToken, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
  });
  afterAll(async () => slack.close());

  it('checks the bearer token', async () => {
    expect((await raw('auth.test', '')).json).toMatchObject({ ok: false, error: 'not_authed' });
    expect((await raw('auth.test', '', 'Bearer xoxb-wrong')).json).toMatchObject({ ok: false, error: 'invalid_auth' });
    expect((await raw('apps.connections.open', '', `Bearer ${slack.identity.botToken}`)).json).toMatchObject({ error: 'not_allowed_token_type' });
    expect((await raw('auth.test', '', `Bearer ${slack.identity.appToken}`)).json).toMatchObject({ error: 'not_allowed_token_type' });
    expect(await bot.auth.test()).toMatchObject({ ok: true, user_id: slack.identity.botUserId, bot_id: slack.identity.botId });
  });

  it('enforces chat.postMessage limits', async () => {
    const post = (args: Record<string, string>) => raw('chat.postMessage', new URLSearchParams(args).toString(), `Bearer ${slack.identity.botToken}`);
    expect((await post({ channel: 'C0GENERAL', text: 'x'.repeat(40_000) })).json.ok).toBe(true);
    expect((await post({ channel: 'C0GENERAL', text: 'x'.repeat(40_001) })).json.error).toBe('msg_too_long');
    expect((await post({ channel: 'C0GENERAL' })).json.error).toBe('no_text');
    expect((await post({ channel: 'C0GENERAL', blocks: '[{"type":"section"}]' })).json.error).toBe('invalid_blocks');
    expect((await post({ channel: 'C0GENERAL', blocks: 'not json' })).json.error).toBe('invalid_blocks_format');
    expect((await post({ channel: 'C0GENERAL', text: 'x', blocks: JSON.stringify([{ type: 'section', text: { type: 'mrkdwn', text: 'y'.repeat(3001) } }]) })).json.error).toBe('invalid_blocks');
    expect((await post({ channel: 'C0ARCHIVE', text: 'x' })).json.error).toBe('is_archived');
    expect((await post({ channel: 'nope', text: 'x' })).json.error).toBe('channel_not_found');
  });

  it('serves injected faults: 429 with Retry-After for the next N calls, then normal answers', async () => {
    slack.fail('chat.postMessage', { error: 'ratelimited', retryAfterSeconds: 3, times: 2 });
    const form = new URLSearchParams({ channel: 'C0GENERAL', text: 'x' }).toString();
    const auth = `Bearer ${slack.identity.botToken}`;
    const a = await raw('chat.postMessage', form, auth);
    const b = await raw('chat.postMessage', form, auth);
    const c = await raw('chat.postMessage', form, auth);
    expect([a.status, b.status, c.status]).toEqual([429, 429, 200]);
    expect(a.retryAfter).toBe('3');
    slack.fail('chat.postMessage', { error: 'not_in_channel' });
    expect((await raw('chat.postMessage', form, auth)).json.error).toBe('not_in_channel');
  });

  it('lets a trigger_id open one modal, within 3 seconds', async () => {
    const view = { type: 'modal', title: { type: 'plain_text', text: 'T' }, close: { type: 'plain_text', text: 'Close' }, blocks: [] };
    const trigger = issueTrigger(slack.state);
    expect((await bot.views.open({ trigger_id: trigger, view: view as never })).ok).toBe(true);
    await expect(bot.views.open({ trigger_id: trigger, view: view as never })).rejects.toMatchObject({ data: { error: 'exchanged_trigger_id' } });
    const old = issueTrigger(slack.state);
    slack.state.triggers.get(old)!.issuedAt -= 3_001;
    await expect(bot.views.open({ trigger_id: old, view: view as never })).rejects.toMatchObject({ data: { error: 'expired_trigger_id' } });
    await expect(bot.views.open({ trigger_id: 'made-up', view: view as never })).rejects.toMatchObject({ data: { error: 'invalid_trigger_id' } });
    const long = { ...view, title: { type: 'plain_text', text: 'a title longer than 24 chars' } };
    await expect(bot.views.open({ trigger_id: issueTrigger(slack.state), view: long as never })).rejects.toMatchObject({ data: { error: 'invalid_arguments' } });
  });

  it('records the pings a post would make', async () => {
    await bot.chat.postMessage({ channel: 'C0GENERAL', text: 'hey <!here> and <@U0UMA0001|uma> but not &lt;!channel&gt;' });
    expect(slack.posted().at(-1)!.pings).toEqual(['<!here>', '<@U0UMA0001|uma>']);
  });

  describe('signed sender', () => {
    let server: Server;
    let url = '';
    const seen: Array<{ headers: Record<string, unknown>; body: string }> = [];
    beforeAll(async () => {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          seen.push({ headers: req.headers, body });
          res.end('ok');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const a = server.address();
      url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('signs like Slack, and can sign badly or too late', async () => {
      await sendSigned(url, 'secret', '{"a":1}', 'application/json', 'valid', { 'x-slack-retry-num': '1' });
      await sendSigned(url, 'secret', '{"a":1}', 'application/json', 'stale');
      await sendSigned(url, 'secret', '{"a":1}', 'application/json', 'bad');
      const [valid, stale, bad] = seen;
      const ts = Number(valid!.headers['x-slack-request-timestamp']);
      expect(valid!.headers['x-slack-signature']).toBe(slackSignature('secret', ts, '{"a":1}'));
      expect(valid!.headers['x-slack-retry-num']).toBe('1');
      expect(Number(stale!.headers['x-slack-request-timestamp'])).toBeLessThan(Date.now() / 1000 - 300);
      expect(bad!.headers['x-slack-signature']).not.toBe(slackSignature('secret', Number(bad!.headers['x-slack-request-timestamp']), '{"a":1}'));
    });
  });
});
