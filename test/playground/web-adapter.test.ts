import { randomUUID } from 'node:crypto';
import { loadTestConfig } from '../support/config.js';
import { request } from 'node:http';
import express from 'express';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';

import { createLogger, SecretRegistry } from '../../src/logger.js';
import { webPlatform } from '../../adapters/web/index.js';
import { sessionValue } from '../../adapters/web/auth.js';
import { compareStreamIds } from '../../adapters/web/events.js';
import { PERSON_MENTION_IN_CHANNEL } from '../support/pipeline.js';
import { openSse, payload } from './sse-client.js';
import { post, REDIS_URL, startHarness, type Harness } from './harness.js';

const target = (messageId: string, channelId = 'general') => ({ channelId, messageId });

describe('web adapter (no token)', () => {
  let h: Harness;
  openForAll(async () => (h = await startHarness()));

  it('serves the page at / and /playground/ with a strict content security policy', async () => {
    for (const path of ['/', '/playground/', '/playground']) {
      const res = await fetch(`${h.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await res.text()).toContain('<main');
    }
    const js = await fetch(`${h.baseUrl}/playground/static/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${h.baseUrl}/playground/static/nope.js`)).status).toBe(404);
  });

  it('normalises a message into IncomingMessage and hands it to ingress', async () => {
    const messageId = randomUUID();
    const res = await post(h, 'messages', { channel: 'general', userName: 'Ann Lee', messageId, text: '@agent  hello **there**' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ messageId, result: { status: 'queued', jobId: `web-${messageId}` } });
    const m = h.handled.at(-1)!;
    expect(m).toMatchObject({
      platform: 'web',
      messageId,
      conversation: { platform: 'web', workspaceId: 'local', channelId: 'general' },
      bindingChannelId: 'general',
      userId: 'user-ann-lee',
      userName: 'Ann Lee',
      text: 'hello **there**',
      ...PERSON_MENTION_IN_CHANNEL,
      reply: { channelId: 'general', messageId },
    });
    expect(m.conversation.threadId).toBeUndefined();

    await post(h, 'messages', { channel: 'general', userName: 'Ann Lee', messageId: randomUUID(), text: 'just chatting' });
    expect(h.handled.at(-1)).toMatchObject({ mentionsBot: false, text: 'just chatting' });
    await post(h, 'messages', { channel: 'general', userName: 'Ann Lee', messageId: randomUUID(), text: 'box ticked', mention: true });
    expect(h.handled.at(-1)).toMatchObject({ mentionsBot: true, text: 'box ticked' });
  });

  it('shows the ingress result, whatever it is', async () => {
    h.ingressResult = () => ({ status: 'dropped', reason: 'not_bound' });
    try {
      const res = await post(h, 'messages', { channel: 'random', userName: 'Bo', messageId: randomUUID(), text: 'hi' });
      expect(res.json.result).toEqual({ status: 'dropped', reason: 'not_bound' });
    } finally {
      h.ingressResult = (m) => ({ status: 'queued', jobId: `web-${m.messageId}` });
    }
  });

  it('posts a double-submitted message once to the channel', async () => {
    const messageId = randomUUID();
    const body = { channel: 'support', userName: 'Cy', messageId, text: 'once please' };
    await Promise.all([post(h, 'messages', body), post(h, 'messages', body)]);
    const sse = await openSse(`${h.baseUrl}/playground/events?channel=support`);
    try {
      await sse.waitFor((e) => e.event === 'ready');
      const copies = sse.events.filter((e) => e.event === 'message' && payload(e).messageId === messageId);
      expect(copies).toHaveLength(1);
      // Both reached ingress, which makes one job of them (same message ID).
      expect(h.handled.filter((m) => m.messageId === messageId)).toHaveLength(2);
    } finally {
      sse.close();
    }
  });

  it('streams history on open, then replies a worker posts through Redis', async () => {
    const messageId = randomUUID();
    await post(h, 'messages', { channel: 'general', userName: 'Dee', messageId, text: '@agent tell me' });
    const sse = await openSse(`${h.baseUrl}/playground/events?channel=general`);
    try {
      const history = await sse.waitFor((e) => e.event === 'message' && payload(e).messageId === messageId);
      await sse.waitFor((e) => e.event === 'ready');
      expect(payload(history)).toMatchObject({ type: 'message', userName: 'Dee', text: 'tell me', mention: true });

      // The worker's port has its own connection: nothing goes through this process's memory.
      const t = target(messageId);
      await h.workerPort.startWorking!(t);
      for (const [i, chunk] of h.workerPort.render('**Hi** Dee').entries()) await h.workerPort.postChunk(t, chunk, i);
      await h.workerPort.postNotice(t, 'a notice');
      await h.workerPort.stopWorking!(t, 'ok');

      const done = await sse.waitFor((e) => e.event === 'message' && payload(e).type === 'done');
      const live = sse.events.filter((e) => e.event === 'message' && payload(e).replyTo === messageId).map(payload);
      expect(live.map((e) => e.type)).toEqual(['working', 'reply', 'notice', 'done']);
      expect(live[1]).toMatchObject({ text: '**Hi** Dee', index: 0, channelId: 'general' });
      expect(payload(done)).toMatchObject({ outcome: 'ok' });
      // Every event carries its stream ID as the SSE id, in order.
      const ids = sse.events.filter((e) => e.id).map((e) => e.id!);
      for (let i = 1; i < ids.length; i++) expect(compareStreamIds(ids[i - 1]!, ids[i]!)).toBeLessThan(0);

      // A reconnect with Last-Event-ID gets only what came after.
      const lastBeforeNotice = live[1]!.id as string;
      const again = await openSse(`${h.baseUrl}/playground/events?channel=general`, { 'Last-Event-ID': lastBeforeNotice });
      try {
        await again.waitFor((e) => e.event === 'ready');
        expect(again.events.filter((e) => e.event === 'message').map((e) => payload(e).type)).toEqual(['notice', 'done']);
      } finally {
        again.close();
      }
    } finally {
      sse.close();
    }
  });

  it('does not send one channel’s events to another', async () => {
    const sse = await openSse(`${h.baseUrl}/playground/events?channel=random`);
    try {
      await sse.waitFor((e) => e.event === 'ready');
      const before = sse.events.length;
      await h.workerPort.postNotice(target(randomUUID(), 'general'), 'for general only');
      await h.workerPort.postNotice(target(randomUUID(), 'random'), 'for random');
      await sse.waitFor((e) => e.event === 'message' && payload(e).text === 'for random');
      expect(sse.events.slice(before).some((e) => e.data.includes('for general only'))).toBe(false);
    } finally {
      sse.close();
    }
  });

  it('ignores malformed announcements and keeps streaming', async () => {
    const sse = await openSse(`${h.baseUrl}/playground/events?channel=random`);
    const publisher = new Redis(REDIS_URL);
    try {
      await sse.waitFor((e) => e.event === 'ready');
      await publisher.publish(`${h.prefix}:web:events`, 'not json');
      await publisher.publish(`${h.prefix}:web:events`, JSON.stringify({ id: '1-0', e: { type: 'bogus', channelId: 'random' } }));
      await h.workerPort.postNotice(target(randomUUID(), 'random'), 'still here');
      await sse.waitFor((e) => e.event === 'message' && payload(e).text === 'still here');
      expect(sse.events.some((e) => e.data.includes('bogus'))).toBe(false);
    } finally {
      sse.close();
      await publisher.quit();
    }
  });

  it('gives the worker the channel as thread context, oldest first, without the trigger', async () => {
    const channel = 'support';
    const first = randomUUID();
    const trigger = randomUUID();
    await post(h, 'messages', { channel, userName: 'Eve', messageId: first, text: 'first question' });
    await h.workerPort.postChunk(target(first, channel), 'answer part 1', 0);
    await h.workerPort.postChunk(target(first, channel), 'answer part 2', 1);
    await h.workerPort.postNotice(target(first, channel), 'notices are not context');
    await post(h, 'messages', { channel, userName: 'Fay', messageId: trigger, text: '@agent and now?' });
    await post(h, 'messages', { channel, userName: 'Gil', messageId: randomUUID(), text: 'after the trigger' });

    const thread = await h.workerPort.fetchThread!(target(trigger, channel), 2);
    expect(thread).toEqual([
      { author: 'Eve', text: 'first question', isBot: false },
      { author: 'agent', text: 'answer part 1\n\nanswer part 2', isBot: true },
    ]);
    expect(await h.workerPort.fetchThread!(target(trigger, channel), 1)).toHaveLength(1);
    expect(await h.workerPort.fetchThread!(target(trigger, channel), 0)).toEqual([]);
  });

  it('splits long replies within the web limit', () => {
    const long = Array.from({ length: 300 }, (_, i) => `Paragraph ${i} with some words in it.`).join('\n\n');
    const chunks = h.workerPort.render(long);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(4000);
  });

  it('runs admin actions through Commands with the web caller', async () => {
    const bound = await post(h, 'bind', { channel: 'general', userName: 'Ann', instanceId: 'inst_a', mode: 'all' });
    expect(bound.json.reply.title).toBe('Channel bound');
    expect(h.commandCalls.at(-1)).toEqual({
      name: 'bind',
      caller: { platform: 'web', workspaceId: 'local', channelId: 'general', userId: 'user-ann', userName: 'Ann' },
      args: ['inst_a', 'all'],
    });
    const bindings = await (await fetch(`${h.baseUrl}/playground/api/bindings`)).json();
    expect(bindings.bindings).toEqual([expect.objectContaining({ channelId: 'general', instanceId: 'inst_a', mode: 'all' })]);

    for (const name of ['status', 'why', 'audit', 'instances']) {
      const res = await post(h, 'command', { channel: 'random', userName: 'Ann', name });
      expect(res.json.reply.title).toBe(`${name} done`);
      expect(h.commandCalls.at(-1)!.name).toBe(name);
    }
    expect((await post(h, 'command', { channel: 'random', userName: 'Ann', name: 'help' })).json.reply.title).toBe('help');
    await post(h, 'set', { channel: 'general', userName: 'Ann', setting: 'quota', value: 'user-per-minute 3' });
    expect(h.commandCalls.at(-1)).toMatchObject({ name: 'set', args: ['quota', 'user-per-minute 3'] });
    await post(h, 'unbind', { channel: 'general', userName: 'Ann' });
    expect(h.commandCalls.at(-1)!.name).toBe('unbind');
  });

  it('runs `/agent …` typed in the message box through the same parser and Commands', async () => {
    const why = await post(h, 'command-text', { channel: 'general', userName: 'Ann', text: 'why' });
    expect(why.json.reply.title).toBe('why done');
    const set = await post(h, 'command-text', { channel: 'general', userName: 'Ann', text: 'set errors reaction' });
    expect(set.status).toBe(200);
    expect(h.commandCalls.at(-1)).toMatchObject({ name: 'set', args: ['errors', expect.stringContaining('reaction')] });
    const cred = await post(h, 'command-text', { channel: 'general', userName: 'Ann', text: 'credential inst_a' });
    expect(cred.json.credentialFormFor).toBe('inst_a');
    const bad = await post(h, 'command-text', { channel: 'general', userName: 'Ann', text: 'frobnicate' });
    expect(bad.json.reply.ok).toBe(false);
    // As typed in the box, with the command's own name: the same command.
    const typed = await post(h, 'command-text', { channel: 'general', userName: 'Ann', text: '/agent why' });
    expect(typed.json.reply.title).toBe('why done');
  });

  it('adds a credential without the value ever coming back, hiding it from logs while it is handled', async () => {
    const value = `sk-${randomUUID()}`;
    const res = await post(h, 'credential', { channel: 'general', userName: 'Ann', instanceId: 'inst_a', key: 'OPENAI_KEY', value });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.json)).not.toContain(value);
    expect(JSON.stringify(res.json)).toContain('OPENAI_KEY');
    expect(h.valueRedactedDuringCall).toBe(true);
    // Still hidden after the request: the agent service may quote the value in a later refusal.
    expect(h.secrets.redact(value)).toBe('[REDACTED]');
  });

  it('shows queue figures and recent failures with their reference IDs', async () => {
    h.failures.push({ ref: 'ab12cd34', platform: 'web', conversationId: 'web:local:general', instanceId: 'inst_a', reason: 'bad_request', at: 1 });
    h.metrics.messages.inc({ platform: 'web', outcome: 'replied' }, 2);
    h.metrics.messages.inc({ platform: 'slack', outcome: 'gave_up' });
    const res = await (await fetch(`${h.baseUrl}/playground/api/queue`)).json();
    // Completed and gave up are messages (the worker's counters, all platforms), never BullMQ's
    // completed jobs (3 here, the given-up one among them); waiting, active, failed are jobs.
    expect(res.counts).toMatchObject({ waiting: 1, active: 2, completed: 2, gaveUp: 1, failed: 1 });
    h.metrics.messages.reset();
    expect(res.failures[0].ref).toBe('ab12cd34');
    const instances = await (await fetch(`${h.baseUrl}/playground/api/instances`)).json();
    expect(instances.instances.map((i: { id: string }) => i.id)).toEqual(['inst_a', 'inst_b']);
  });

  it('answers bad requests with clear 4xx JSON that never echoes the body', async () => {
    const unknownChannel = await post(h, 'messages', { channel: 'nope', userName: 'A', messageId: randomUUID(), text: 'x' });
    expect(unknownChannel.status).toBe(400);
    expect(unknownChannel.json.error).toMatch(/channel: must be one of general, support, random/);

    const noId = await post(h, 'messages', { channel: 'general', userName: 'A', messageId: 'not-a-uuid', text: 'x' });
    expect(noId.status).toBe(400);
    expect(noId.json.issues).toEqual([expect.objectContaining({ field: 'messageId' })]);

    const badJson = await post(h, 'credential', '{"value": "hunter2-secret", oops');
    expect(badJson.status).toBe(400);
    expect(badJson.json.error).toBe('The request body is not valid JSON.');
    expect(JSON.stringify(badJson.json)).not.toContain('hunter2');

    const badCred = await post(h, 'credential', { channel: 'general', userName: 'A', instanceId: 'i', key: '', value: 'hunter2-secret' });
    expect(badCred.status).toBe(400);
    expect(JSON.stringify(badCred.json)).not.toContain('hunter2');

    const big = await post(h, 'messages', { channel: 'general', userName: 'A', messageId: randomUUID(), text: 'x'.repeat(70_000) });
    expect(big.status).toBe(413);

    const form = await fetch(`${h.baseUrl}/playground/api/bind`, { method: 'POST', body: new URLSearchParams({ channel: 'general' }) });
    expect(form.status).toBe(400);

    expect((await fetch(`${h.baseUrl}/playground/api/nothing`)).status).toBe(404);
    expect((await fetch(`${h.baseUrl}/playground/events?channel=nope`)).status).toBe(400);
  });

  it('refuses cross-origin POSTs and foreign Host names', async () => {
    const cross = await post(h, 'bind', { channel: 'general', userName: 'A', instanceId: 'inst_a' }, { Origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${h.baseUrl}/playground/api/info`, { headers: { Host: 'rebound.example:3000' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('without a token refuses requests that came through a proxy (X-Forwarded-*, Forwarded)', async () => {
    for (const headers of [{ 'X-Forwarded-For': '203.0.113.9' }, { 'X-Forwarded-Host': 'localhost' }, { 'X-Forwarded-Proto': 'https' }, { Forwarded: 'for=203.0.113.9' }] as Array<Record<string, string>>) {
      expect((await fetch(`${h.baseUrl}/playground/api/info`, { headers })).status, JSON.stringify(headers)).toBe(403);
    }
    expect((await fetch(`${h.baseUrl}/playground/api/info`)).status).toBe(200);
  });
});

describe('web adapter with PLAYGROUND_TOKEN', () => {
  const token = `tok-${randomUUID()}`;
  let h: Harness;
  openForAll(async () => (h = await startHarness({ PLAYGROUND_TOKEN: token })));

  it('opening the banner\'s URL in a browser shows a page that asks for the token, and its form logs in', async () => {
    const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
    for (const path of ['/', '/playground/']) {
      const page = await fetch(`${h.baseUrl}${path}`, { headers: { Accept: browserAccept } });
      expect(page.status, path).toBe(401);
      expect(page.headers.get('content-type'), path).toMatch(/^text\/html/);
      const html = await page.text();
      // A form with a password field named `token` that POSTs to /playground/login, not a raw JSON
      // 401 (a GET would put the token in the URL: proxies' access logs, the history).
      const form = /<form action="([^"]+)" method="post">([\s\S]*?)<\/form>/.exec(html);
      expect(form, html).not.toBeNull();
      expect(form![1]).toBe('/playground/login');
      expect(form![2]).toMatch(/<label for="token">[^<]*token[^<]*<\/label>/i);
      expect(form![2]).toMatch(/<input id="token" name="token" type="password"[^>]*required/);
      expect(form![2]).toMatch(/<button>[^<]+<\/button>/);
      expect(html).not.toContain(token);
    }
    // Submitting the form posts the field, as a browser does: the session cookie, then the page.
    const submit = (value: string, origin = h.baseUrl) =>
      fetch(`${h.baseUrl}/playground/login`, {
        method: 'POST',
        headers: { Accept: browserAccept, 'Content-Type': 'application/x-www-form-urlencoded', Origin: origin },
        body: new URLSearchParams({ token: value }).toString(),
        redirect: 'manual',
      });
    const submitted = await submit(token);
    expect(submitted.status).toBe(303);
    const cookie = submitted.headers.get('set-cookie')!.split(';')[0]!;
    const opened = await fetch(`${h.baseUrl}${submitted.headers.get('location')}`, { headers: { Accept: browserAccept, Cookie: cookie } });
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain('<title>');
    // A wrong token asks again, with the form.
    const wrong = await submit('nope');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('<form action="/playground/login" method="post"');
    // A page elsewhere cannot post tokens through the user's browser; a body that is not a form is refused plainly.
    expect((await submit(token, 'http://evil.example')).status).toBe(403);
    const big = await fetch(`${h.baseUrl}/playground/login`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `token=${'x'.repeat(10_000)}` });
    expect(big.status).toBe(413);
    expect(await big.text()).toBe('The login form could not be read.');
  });

  it('requires the token on every route, SSE included', async () => {
    const page = await fetch(`${h.baseUrl}/`, { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('/playground/login');
    for (const path of ['/playground/', '/playground/api/info', '/playground/events?channel=general', '/playground/static/app.js']) {
      expect((await fetch(`${h.baseUrl}${path}`)).status).toBe(401);
    }
    expect((await post(h, 'messages', {})).status).toBe(401);
    expect((await fetch(`${h.baseUrl}/playground/api/info`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${h.baseUrl}/playground/api/info`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    const sse = await openSse(`${h.baseUrl}/playground/events?channel=general`, { Authorization: `Bearer ${token}` });
    await sse.waitFor((e) => e.event === 'ready');
    sse.close();
  });

  it('logs in with ?token= and a cookie that does not hold the token', async () => {
    const wrong = await fetch(`${h.baseUrl}/playground/login?token=nope`, { redirect: 'manual' });
    expect(wrong.status).toBe(401);
    const res = await fetch(`${h.baseUrl}/playground/login?token=${encodeURIComponent(token)}`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/playground/');
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(token);
    const value = cookie.split(';')[0]!;
    // The cookie expires (12 hours), and carries its expiry under the MAC.
    expect(cookie).toMatch(/; Max-Age=43200;/);
    const expires = Number(/^agent_bridge_playground=(\d+)\./.exec(value)?.[1]);
    expect(expires * 1000).toBeGreaterThan(Date.now() + 43_000_000);
    expect(value).toBe(`agent_bridge_playground=${sessionValue(token, expires)}`);
    expect((await fetch(`${h.baseUrl}/playground/api/info`, { headers: { Cookie: value } })).status).toBe(200);
    expect((await fetch(`${h.baseUrl}/`, { headers: { Cookie: value } })).status).toBe(200);
    expect((await fetch(`${h.baseUrl}/`, { headers: { Cookie: 'agent_bridge_playground=forged' } })).status).toBe(401);
  });

  it('keeps the token out of the logs while the adapter runs', () => {
    expect(h.secrets.redact(`token=${token}`)).toBe('token=[REDACTED]');
  });
});

describe('web adapter when the playground is off', () => {
  it('mounts nothing', async () => {
    const config = loadTestConfig({ PLAYGROUND: 'false', LOG_LEVEL: 'silent' });
    const app = express();
    const adapter = webPlatform.createAdapter({
      config,
      logger: createLogger({ level: 'silent' }),
      secrets: new SecretRegistry(),
      http: app,
    } as unknown as Parameters<typeof webPlatform.createAdapter>[0]);
    await adapter.start();
    await adapter.stop();
    expect(app.router.stack).toHaveLength(0);
  });
});
