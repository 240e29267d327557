import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { INPUT_ACTION, KEY_BLOCK, VALUE_BLOCK } from '../../adapters/slack/credential-modal.js';
import type { Delivery } from '../emulators/slack/index.js';
import type { EmuInteraction } from '../emulators/discord/index.js';
import { startCanaryBridge, SW, type CanaryBridge } from './support/canary-bridge.js';
import { sleep, until, watchProcessErrors } from './support/guards.js';
import { dumpKeysAt, SHARED_REDIS } from './support/keys.js';
import { figures } from './support/ledger.js';

/**
 * End-to-end flows on Slack and Discord at once, with every secret set to a canary value and
 * the error paths taken on purpose (an agent 401 that echoes the API key, 5xx pages that echo
 * the session, a credentials endpoint that echoes the submitted value, a Slack auth failure).
 * No canary may appear in the logs (trace level), anything the process printed, any Redis key
 * or value under the prefix, job data, HTTP answers, or anything sent to a platform.
 */
const credentialValue = () => `cred-canary-${randomBytes(10).toString('hex')}`;

describe.each(['http', 'socket'] as const)('secrets stay secret (Slack over %s, Discord gateway)', (mode) => {
  let b: CanaryBridge;
  const guard = watchProcessErrors();
  const printed: string[] = [];
  const restore: Array<() => void> = [];
  const acks: Delivery[] = [];
  const credentialValues: string[] = [];
  const httpBodies: string[] = [];

  beforeAll(async () => {
    // Whatever the process prints outside the logger (a library's console.error, a warning) counts too.
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        printed.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
        return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
      restore.push(() => (stream.write = original as typeof stream.write));
    }
    b = await startCanaryBridge(mode);
  });
  afterAll(async () => {
    for (const r of restore) r();
    guard.stop();
    await b?.close();
  });

  const w = () => b.discord.world;
  const mention = () => `<@${b.slack.identity.botUserId}>`;
  async function say(channel: string, text: string, user: string = SW.user) {
    const m = b.slack.userMessage({ channel, user, text });
    if (text.includes(mention())) acks.push(await b.to.event(m.mention));
    acks.push(await b.to.event(m.message));
    return m;
  }
  async function slash(text: string, user: string = SW.admin) {
    const ack = await b.to.command({ text, user, channel: SW.general });
    acks.push(ack);
    return ack;
  }
  async function slackCredential(key: string, value: string, user: string = SW.admin) {
    const ack = await slash('credential demo-helper', SW.admin);
    const open = await b.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
    const viewId = (open.response.view as { id: string }).id;
    const submitted = await b.to.interaction(b.slack.viewSubmission(viewId, user, { [KEY_BLOCK]: { [INPUT_ACTION]: key }, [VALUE_BLOCK]: { [INPUT_ACTION]: value } }));
    acks.push(submitted);
    return submitted;
  }
  function discordCommand(sub: string, options: Record<string, string> = {}, user = w().users.alice): EmuInteraction {
    return b.discord.runCommand({ user, channel: w().channels.general, subcommand: sub, options });
  }
  async function discordCredential(key: string, value: string, user = w().users.alice) {
    const open = discordCommand('credential', { instance: 'demo-helper' }, user);
    await b.discord.waitFor(() => open.responses.find((r) => r.type === 9) ?? open.original?.content, 'modal or refusal');
    const submit = b.discord.submitModal({ user, channel: w().channels.general, customId: 'agent:credential:demo-helper', fields: { key, value } });
    await b.discord.waitFor(() => submit.original?.content, 'modal answer');
    return submit;
  }

  it('runs the happy paths and the error paths on both platforms', async () => {
    const c = b.canaries;
    // Chat: Slack mention, Slack DM, Discord mention, Discord DM.
    const s1 = await say(SW.general, `${mention()} hello with secrets around`);
    await say(SW.dm, 'a direct question');
    const d1 = b.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `<@${w().bot.id}> hello from discord` });
    b.discord.sendMessage({ author: w().users.bob, channel: w().channels.dmBob, content: 'discord dm' });
    await b.slack.waitForCall('chat.postMessage', (x) => x.params.thread_ts === s1.ts && (x.params.text ?? '').startsWith('echo:'), 15_000);
    await b.discord.waitFor(() => b.discord.repliesTo(d1.id as string)[0], 'discord reply');
    // All four chats have reached the agent before its faults are set: a DM's call that comes
    // late (a loaded machine) would take one of them, and the notices below would change.
    await b.agent.waitForCalls(4, (x) => x.endpoint === 'chat', 30_000);

    // The agent answers 401 and echoes the API key; then 5xx pages that echo the session.
    b.agent.failNext(2, { status: 401, body: { error: `invalid API key ${c.AGENT_API_KEY}`, detail: { key: c.AGENT_API_KEY } } }, { endpoint: 'chat' });
    const cookieValue = c.AGENT_SESSION_COOKIE.split('=')[1]!;
    b.agent.failNext(4, { status: 503, body: `<html><body>upstream rejected cookie ${c.AGENT_SESSION_COOKIE} (${cookieValue}) and token ${c.AGENT_SESSION_TOKEN} (key ${encodeURIComponent(c.AGENT_API_KEY)})</body></html>` }, { endpoint: 'chat' });
    const s2 = await say(SW.general, `${mention()} this one meets a 401`);
    const d2 = b.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `<@${w().bot.id}> so does this one` });
    await b.slack.waitForCall('chat.postMessage', (x) => x.params.thread_ts === s2.ts && /isn.t allowed/.test(x.params.text ?? ''), 30_000);
    await b.discord.waitFor(() => b.discord.repliesTo(d2.id as string)[0], 'discord notice');
    const s3 = await say(SW.general, `${mention()} this one meets 503s`);
    const d3 = b.discord.sendMessage({ author: w().users.alice, channel: w().channels.general, content: `<@${w().bot.id}> and 503s here` });
    await b.slack.waitForCall('chat.postMessage', (x) => x.params.thread_ts === s3.ts && /having trouble/.test(x.params.text ?? ''), 30_000);
    await b.discord.waitFor(() => b.discord.repliesTo(d3.id as string)[0], 'discord notice');

    // Slack refuses the bot token once.
    b.slack.fail('chat.postMessage', { error: 'invalid_auth' });
    await say(SW.general, `${mention()} slack says invalid_auth`);

    // Admin commands, the listing failing with an echo of the key.
    const instancesAck = await slash('instances');
    await b.slack.waitForCall('response_url', (x) => x.response.id === instancesAck.responseUrlId);
    b.agent.failNext(1, { status: 401, body: { message: `key ${c.AGENT_API_KEY} revoked` } }, { endpoint: 'instances' });
    const failingList = await slash('instances');
    await b.slack.waitForCall('response_url', (x) => x.response.id === failingList.responseUrlId);
    const di = discordCommand('instances');
    await b.discord.waitFor(() => di.original?.content, 'discord instances');
    await slash('status');

    // Credentials: accepted; refused with the value echoed; refused with the cookie echoed; by a non-admin.
    for (const v of Array.from({ length: 8 }, credentialValue)) credentialValues.push(v);
    const [v1, v2, v3, v4, v5, v6, v7, v8] = credentialValues as [string, string, string, string, string, string, string, string];
    expect((await slackCredential('OPENAI_API_KEY', v1)).body).toMatchObject({ response_action: 'clear' });
    b.agent.failNext(1, { status: 400, body: { error: `value ${v2} is not a valid key for this provider` } }, { endpoint: 'credentials' });
    expect((await slackCredential('OPENAI_API_KEY', v2)).body).toMatchObject({ response_action: 'errors' });
    b.agent.failNext(1, { status: 403, body: `<html>session ${c.AGENT_SESSION_COOKIE} expired; value was ${v3}</html>` }, { endpoint: 'credentials' });
    // A refused session is shown on the form as a whole (the form replaced by the answer).
    expect((await slackCredential('OPENAI_API_KEY', v3)).body).toMatchObject({ response_action: 'update' });
    expect(JSON.stringify((await slackCredential('STOLEN', v4, SW.user)).body)).toMatch(/Only admins/);
    expect((await discordCredential('GITHUB_TOKEN', v5)).original?.content).toMatch(/GITHUB_TOKEN/);
    b.agent.failNext(1, { status: 422, body: { detail: [{ msg: `bad value ${v6}`, loc: ['body', 'value'] }] } }, { endpoint: 'credentials' });
    expect((await discordCredential('GITHUB_TOKEN', v6)).original?.content).toMatch(/refused/);
    b.agent.failNext(1, { status: 500, body: `internal error while storing ${v7} with ${c.AGENT_SESSION_TOKEN}` }, { endpoint: 'credentials' });
    expect((await discordCredential('GITHUB_TOKEN', v7)).original?.content).toMatch(/may or may not/);
    expect((await discordCredential('STOLEN', v8, w().users.bob)).original?.content).toMatch(/only admins/i);
    expect(b.agent.credentials.get('demo-helper')?.get('OPENAI_API_KEY')).toBe(v1);
    expect(b.agent.credentials.get('demo-helper')?.get('GITHUB_TOKEN')).toBe(v5);
    expect(b.agent.credentials.get('demo-helper')?.has('STOLEN')).toBeFalsy();

    // HTTP: health, readiness, metrics, and the queue dashboard with its password.
    const base = `http://127.0.0.1:${b.bridge.httpPort}`;
    const auth = { authorization: `Basic ${Buffer.from(`ops:${c.ADMIN_PASSWORD}`).toString('base64')}` };
    for (const [path, headers] of [['/healthz', {}], ['/readyz', {}], ['/metrics', {}], ['/admin/queues', auth], ['/admin/queues/api/queues?activeQueue=chat&status=completed&page=1', auth], ['/admin/queues', {}]] as const) {
      const res = await fetch(base + path, { headers });
      httpBodies.push(`${path} ${res.status} ${JSON.stringify([...res.headers])} ${await res.text()}`);
    }
    // Quiet: every job finished, every listener returned.
    await until(async () => (await b.bridge.queue.counts()).active + (await b.bridge.queue.counts()).waiting === 0, 'queue idle', 15_000);
    await sleep(500);
  }, 120_000);

  it('no canary appears in logs, output, Redis, job data, HTTP answers, or anything sent to a platform or the agent', async () => {
    const secrets: Record<string, string> = {
      ...b.canaries,
      'AGENT_SESSION_COOKIE value': b.canaries.AGENT_SESSION_COOKIE.split('=')[1]!,
      ...Object.fromEntries(credentialValues.map((v, i) => [`credential value ${i + 1}`, v])) };
    // Socket Mode was not configured in HTTP mode: its canary simply must not appear either.
    const jobs = await b.bridge.queue.queue.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active', 'prioritized']);
    const jobText = JSON.stringify(jobs.map((j) => ({ id: j.id, data: j.data, returnvalue: j.returnvalue, failedReason: j.failedReason, stacktrace: j.stacktrace })));
    const redis = await dumpKeysAt(SHARED_REDIS, b.prefix);
    const slackSent = JSON.stringify(b.slack.calls.map((x) => ({ method: x.method, body: x.rawBody, params: x.params })));
    const acksSent = JSON.stringify(acks.map((a) => a.body));
    const discordSent = JSON.stringify([
      b.discord.calls.map((x) => ({ path: x.rawPath, query: x.query, body: x.body })),
      [...b.discord.store.interactions.values()].map((i) => ({ responses: i.responses, original: i.original, followups: i.followups })),
    ]);
    // The agent legitimately gets the key and the session in headers, and a credential value in its own request body.
    const agentSent = JSON.stringify(b.agent.calls.filter((x) => x.endpoint !== 'credentials').map((x) => ({ path: x.path, body: x.body })));
    const credentialBodies = b.agent.calls.filter((x) => x.endpoint === 'credentials').map((x) => x.body);
    const places: Record<string, string> = {
      logs: b.logs.text,
      printed: printed.join(''),
      redis,
      jobs: jobText,
      http: httpBodies.join('\n'),
      'sent to Slack': slackSent,
      'acks to Slack': acksSent,
      'sent to Discord': discordSent,
      'sent to the agent (chat, listing)': agentSent,
    };
    const leaks: string[] = [];
    for (const [name, secret] of Object.entries(secrets)) {
      for (const form of new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)])) {
        for (const [place, text] of Object.entries(places)) if (text.includes(form)) leaks.push(`${name} in ${place}`);
      }
      // A credential request carries its own value and no other secret.
      for (const body of credentialBodies) if (!credentialValues.includes(secret) && body.includes(secret)) leaks.push(`${name} in a credentials request body`);
    }
    figures(`secrets-${mode}`, {
      canaries: Object.keys(secrets).length,
      logLines: b.logs.lines.length,
      redisBytes: redis.length,
      jobs: jobs.length,
      slackCalls: b.slack.calls.length,
      discordCalls: b.discord.calls.length,
      agentCalls: b.agent.calls.length,
      leaks,
    });
    // The search looked where it should: LOG_LEVEL=trace (nothing in the bridge logs below
    // debug), debug lines are there, and so are the error paths.
    expect(b.bridge.config.logLevel).toBe('trace');
    expect(b.logs.lines.some((l) => l.includes('"level":20'))).toBe(true);
    expect(b.logs.text).toContain('gave up on a message');
    expect(b.logs.text).toContain('[REDACTED]');
    expect(jobs.length).toBeGreaterThan(5);
    expect(leaks).toEqual([]);
    expect(guard.errors).toEqual([]);
  });
});
