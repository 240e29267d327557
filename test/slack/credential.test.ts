import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { CREDENTIAL_CALLBACK_ID, INPUT_ACTION, KEY_BLOCK, VALUE_BLOCK } from '../../adapters/slack/credential-modal.js';
import { dumpKeys } from '../support/redis-cleanup.js';
import { startSlackBridge, until, W, type SlackHarness } from './harness.js';

/** Runs `/agent credential <instance>` as `user` and returns the opened view's ID. */
async function openForm(h: SlackHarness, instance: string, user: string = W.admin): Promise<string> {
  const ack = await h.to.command({ text: `credential ${instance}`, user, channel: W.general });
  const open = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
  expect(open.response.ok).toBe(true);
  const view = JSON.parse(open.params.view!) as { callback_id: string; private_metadata: string };
  expect(view.callback_id).toBe(CREDENTIAL_CALLBACK_ID);
  return (open.response.view as { id: string }).id;
}

function submit(h: SlackHarness, viewId: string, key: string, value: string, user: string = W.admin) {
  return h.to.interaction(h.slack.viewSubmission(viewId, user, { [KEY_BLOCK]: { [INPUT_ACTION]: key }, [VALUE_BLOCK]: { [INPUT_ACTION]: value } }));
}

/** The value must be nowhere: not in any log line, Redis key or value, or any call the bot made to Slack. */
async function expectNowhere(h: SlackHarness, value: string) {
  expect(h.logs.text).not.toContain(value);
  // Not even redacted: no raw payload (which names the value's block) reached the log.
  expect(h.logs.text).not.toContain(VALUE_BLOCK);
  expect(await dumpKeys(h.prefix)).not.toContain(value);
  for (const call of h.slack.calls) {
    expect(call.rawBody, `${call.method} carried the value`).not.toContain(value);
    expect(JSON.stringify(call.params)).not.toContain(value);
  }
}

describe.each(['http', 'socket'] as const)('credential modal over %s', (mode) => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode })));

  it('adds the credential at once, confirms with the key only, and leaks the value nowhere', async () => {
    const value = `sk-canary-${randomUUID()}`;
    const viewId = await openForm(h, 'demo-helper');
    const open = h.slack.callsOf('views.open').at(-1)!;
    expect(open.params.view).not.toContain(value);
    const ack = await submit(h, viewId, 'OPENAI_API_KEY', value);
    expect(ack.acked).toBe(true);
    expect(ack.body).toMatchObject({ response_action: 'clear' });
    expect(h.agent.credentials.get('demo-helper')?.get('OPENAI_API_KEY')).toBe(value);
    const confirm = await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === W.admin);
    expect(confirm.params.channel).toBe(W.general);
    expect(confirm.params.blocks).toContain('OPENAI_API_KEY');
    await until(() => /credential added/.test(h.logs.text), 'audit/log line written');
    await expectNowhere(h, value);
  });

  it('sends the value without the spaces around it, as Discord does', async () => {
    const value = `sk-canary-${randomUUID()}`;
    const viewId = await openForm(h, 'demo-helper');
    const ack = await submit(h, viewId, 'PADDED_KEY', `  ${value} \n`);
    expect(ack.body).toMatchObject({ response_action: 'clear' });
    expect(h.agent.credentials.get('demo-helper')?.get('PADDED_KEY')).toBe(value);
  });

  it('shows an unknown instance as an error in the modal', async () => {
    const value = `sk-canary-${randomUUID()}`;
    const viewId = await openForm(h, 'no-such-instance');
    const ack = await submit(h, viewId, 'SOME_KEY', value);
    expect(ack.body).toMatchObject({ response_action: 'errors' });
    const errors = (ack.body as { errors: Record<string, string> }).errors;
    expect(errors[KEY_BLOCK]).toMatch(/No instance with ID/);
    await expectNowhere(h, value);
  });

  it('shows an invalid key name and an empty value as field errors', async () => {
    const viewId = await openForm(h, 'demo-helper');
    const bad = await submit(h, viewId, '1 not a key', 'some-secret-value');
    expect((bad.body as { errors: Record<string, string> }).errors[KEY_BLOCK]).toMatch(/key name is not valid/);
    const empty = await submit(h, viewId, 'GOOD_KEY', '   ');
    expect((empty.body as { errors: Record<string, string> }).errors[VALUE_BLOCK]).toMatch(/secret value/);
  });

  it.each([
    ['the value itself', (v: string) => v, /key and the value are the same/],
    ['a token', () => `ghp_${randomUUID().replace(/-/g, '')}`, /looks like a secret/],
    ['a long random string', () => 'k7Qx9Lm2Zp4Rt8Vw1Ny6Bc3Hd5', /looks like a secret/],
  ])('refuses %s as the key on the Key field, and shows it to no admin', async (_name, keyOf, words) => {
    const value = `sk-canary-${randomUUID()}`;
    const key = keyOf(value);
    const viewId = await openForm(h, 'demo-helper');
    const ack = await submit(h, viewId, key, value);
    expect(ack.body).toMatchObject({ response_action: 'errors' });
    expect((ack.body as { errors: Record<string, string> }).errors[KEY_BLOCK]).toMatch(words);
    expect(h.agent.credentials.get('demo-helper')?.has(key)).toBeFalsy();
    // Not in the audit log /agent audit shows, nor anywhere else in Redis.
    expect(await dumpKeys(h.prefix)).not.toContain(key);
    expect(JSON.stringify(ack.body)).not.toContain(key);
    await expectNowhere(h, value);
  });

  it('refuses a submission from a non-admin in the modal', async () => {
    const value = `sk-canary-${randomUUID()}`;
    const viewId = await openForm(h, 'demo-helper');
    const ack = await submit(h, viewId, 'STOLEN_KEY', value, W.user);
    expect((ack.body as { errors: Record<string, string> }).errors[KEY_BLOCK]).toMatch(/Only admins/);
    expect(h.agent.credentials.get('demo-helper')?.has('STOLEN_KEY')).toBeFalsy();
    await expectNowhere(h, value);
  });
});

describe('credential command without a dashboard session', () => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode: 'http', env: { AGENT_SESSION_COOKIE: '' } })));

  it('answers at once, privately, what the operator must set, and opens no form', async () => {
    const ack = await h.to.command({ text: 'credential demo-helper', user: W.admin, channel: W.general });
    const answer = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
    expect(answer.params.response_type).toBe('ephemeral');
    expect(answer.params.blocks).toMatch(/needs a dashboard session/);
    expect(answer.params.blocks).toContain('AGENT_SESSION_COOKIE');
    expect(h.slack.callsOf('views.open')).toHaveLength(0);
    expect(h.agent.calls.filter((c) => c.endpoint === 'credentials')).toHaveLength(0);
  });
});

describe('credential modal with a dashboard session the service refuses', () => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode: 'http', env: { AGENT_SESSION_COOKIE: 'demo_session=expired' } })));

  it('shows the refusal on the form as a whole, not on the Key field', async () => {
    const value = `sk-canary-${randomUUID()}`;
    const viewId = await openForm(h, 'demo-helper');
    const ack = await submit(h, viewId, 'OPENAI_API_KEY', value);
    expect(ack.body).toMatchObject({ response_action: 'update' });
    const view = JSON.stringify((ack.body as { view: unknown }).view);
    expect(view).toMatch(/refused the dashboard session/);
    expect(view).not.toContain(KEY_BLOCK);
    await expectNowhere(h, value);
  });
});

describe('credential modal with a slow agent service', () => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode: 'http', adapter: { credentialAckBudgetMs: 200 } })));

  it('acks within Slack’s 3 s with a “saving” view, then updates it and confirms', async () => {
    const value = `sk-canary-${randomUUID()}`;
    h.agent.setDelay(800, { endpoint: 'credentials' });
    const viewId = await openForm(h, 'demo-helper');
    const ack = await submit(h, viewId, 'SLOW_KEY', value);
    expect(ack.ms).toBeLessThan(3_000);
    expect(ack.body).toMatchObject({ response_action: 'update' });
    const update = await h.slack.waitForCall('views.update', (c) => c.params.view_id === viewId);
    expect(update.params.view).toContain('Credential added');
    await h.slack.waitForCall('chat.postEphemeral', (c) => (c.params.blocks ?? '').includes('SLOW_KEY'));
    expect(h.agent.credentials.get('demo-helper')?.get('SLOW_KEY')).toBe(value);
    await expectNowhere(h, value);
  });
});
