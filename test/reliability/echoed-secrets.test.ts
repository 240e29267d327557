import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toPlatformError } from '../../adapters/discord/errors.js';
import { createCredentialFingerprints } from '../../src/crypto/credential-fingerprints.js';
import { bullPrefix } from '../../src/redis.js';
import { INPUT_ACTION, KEY_BLOCK, VALUE_BLOCK } from '../../adapters/slack/credential-modal.js';
import { startCanaryBridge, SW, type CanaryBridge } from './support/canary-bridge.js';
import { sleep, until } from './support/guards.js';
import { dumpKeysAt, SHARED_REDIS } from './support/keys.js';

/**
 * Secrets that come back later, inside someone else's words: a platform API error that quotes
 * the bot token, an agent service refusal that quotes a credential value added a little
 * earlier. Whatever the bridge keeps or shows of them (the failure log in Redis, shown in the
 * admin pane; the notice in chat) has them replaced.
 */
describe('secrets echoed back in error messages', () => {
  let b: CanaryBridge;
  beforeAll(async () => {
    b = await startCanaryBridge('http', { JOB_ATTEMPTS: '1' });
  });
  afterAll(async () => {
    await b?.close();
  });

  it('a Slack error that quotes the token is not stored in Redis', async () => {
    const c = b.canaries;
    b.slack.fail('chat.postMessage', { error: `invalid_auth:${c.SLACK_BOT_TOKEN}`, times: 3 });
    const m = b.slack.userMessage({ channel: SW.general, user: SW.user, text: `<@${b.slack.identity.botUserId}> hi` });
    await b.to.event(m.mention);
    await b.to.event(m.message);
    await until(
      async () => {
        const n = await b.bridge.queue.counts();
        return n.active + n.waiting + n.delayed === 0;
      },
      'idle',
      30_000,
    );
    await sleep(500);
    const redis = await dumpKeysAt(SHARED_REDIS, b.prefix);
    expect(redis).toContain('invalid_auth:[REDACTED]');
    expect(redis).not.toContain(c.SLACK_BOT_TOKEN);
  }, 60_000);

  it("a Discord error cut to length never keeps part of a token (redaction could no longer find it)", () => {
    const token = 'canary-discord-0123456789abcdef.MTIz.abc';
    // The token straddles character 200, where Discord's message is cut.
    const message = `Unauthorized ${'x'.repeat(170)} (token ${token} is not valid)`;
    const e = toPlatformError({ status: 403, code: 0, method: 'post', url: 'https://discord.com/api/v10/channels/1/messages', message }, 'message create');
    expect(e.message).toContain('Unauthorized xxx');
    expect(e.message).not.toContain(token.slice(0, 8));
  });

  it('discord: a credential value the agent service quotes after the call is not posted or stored', async () => {
    const w = b.discord.world;
    const v = `cred-later-${Date.now()}-abcdef`;
    const submit = b.discord.submitModal({ user: w.users.alice, channel: w.channels.general, customId: 'agent:credential:demo-helper', fields: { key: 'OPENAI_API_KEY', value: v } });
    await b.discord.waitFor(() => submit.original?.content, 'modal answer');
    expect(b.agent.credentials.get('demo-helper')?.get('OPENAI_API_KEY')).toBe(v);
    b.agent.failNext(1, { status: 409, body: { error: `instance stopped: OPENAI_API_KEY=${v} rejected by provider` } }, { endpoint: 'chat' });
    const d = b.discord.sendMessage({ author: w.users.alice, channel: w.channels.general, content: `<@${w.bot.id}> hello` });
    const notice = await b.discord.waitFor(() => b.discord.repliesTo(d.id as string)[0], 'notice');
    await sleep(500);
    expect(JSON.stringify(notice)).toContain('instance stopped');
    expect(JSON.stringify(notice)).not.toContain(v);
    expect(await dumpKeysAt(SHARED_REDIS, b.prefix)).not.toContain(v);
    expect(b.logs.text).not.toContain(v);
  }, 60_000);

  it('a credential value another process took, quoted by the agent inside compact JSON or a URL query, is not posted or logged', async () => {
    // An ingress process of the deployment took the value: this (worker) process knows only its fingerprint.
    const ingress = createCredentialFingerprints({ redis: b.bridge.redis, prefix: `${bullPrefix(b.bridge.config)}:chat`, secret: b.canaries.AGENT_API_KEY, logger: { warn: () => {} } });
    const v = `cred-json-${Date.now()}-abcdef`;
    await ingress.ready();
    await ingress.add(v);
    await ingress.close();
    await sleep(300);
    const w = b.discord.world;
    // The echo agent answers with what it was sent: its answer quotes the value without spaces around it.
    const d = b.discord.sendMessage({ author: w.users.alice, channel: w.channels.general, content: `<@${w.bot.id}> {"OPENAI_API_KEY":"${v}","model":"x"} https://api.example.com/v1?model=x&key=${v}&y=1` });
    const reply = await b.discord.waitFor(() => b.discord.repliesTo(d.id as string)[0], 'reply');
    await sleep(300);
    const posted = (reply as { content?: string }).content ?? '';
    expect(posted).toContain('echo:');
    expect(posted).not.toContain(v);
    expect(b.logs.text).not.toContain(v);
  }, 60_000);

  it("a secret the agent service's listing quotes (an instance named after the API key) is shown redacted on Slack and Discord alike", async () => {
    const c = b.canaries;
    b.agent.instances.push({ id: 'leaky-1', name: `Leaky ${c.AGENT_API_KEY}`, status: 'running', type: 'assistant' });
    const ack = await b.to.command({ text: 'instances', user: SW.admin, channel: SW.general });
    const shown = await b.slack.waitForCall('response_url', (x) => x.response.id === ack.responseUrlId);
    const w = b.discord.world;
    const di = b.discord.runCommand({ user: w.users.alice, channel: w.channels.general, subcommand: 'instances', options: {} });
    const discordShown = await b.discord.waitFor(() => di.original?.content, 'discord instances');
    b.agent.instances.pop();
    expect(JSON.stringify(shown.params)).toContain('Leaky');
    expect(JSON.stringify(shown.params)).not.toContain(c.AGENT_API_KEY);
    expect(discordShown).not.toContain(c.AGENT_API_KEY);
  }, 60_000);

  it('slack: a credential value the agent service quotes after the call is not posted or stored', async () => {
    const v = `cred-later-slack-${Date.now()}-abcdef`;
    const ack = await b.to.command({ text: 'credential demo-helper', user: SW.admin, channel: SW.general });
    const open = await b.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
    const viewId = (open.response.view as { id: string }).id;
    await b.to.interaction(b.slack.viewSubmission(viewId, SW.admin, { [KEY_BLOCK]: { [INPUT_ACTION]: 'K2' }, [VALUE_BLOCK]: { [INPUT_ACTION]: v } }));
    b.agent.failNext(1, { status: 409, body: { error: `instance stopped: K2=${v} rejected` } }, { endpoint: 'chat' });
    const m = b.slack.userMessage({ channel: SW.general, user: SW.user, text: `<@${b.slack.identity.botUserId}> hi` });
    await b.to.event(m.mention);
    await b.to.event(m.message);
    const post = await b.slack.waitForCall('chat.postMessage', (x) => x.params.thread_ts === m.ts && /stopped/.test(x.params.text ?? ''), 20_000);
    await sleep(500);
    expect(JSON.stringify(post.params)).not.toContain(v);
    expect(await dumpKeysAt(SHARED_REDIS, b.prefix)).not.toContain(v);
  }, 60_000);
});
