import { afterAll, describe, expect, it } from 'vitest';
import { NO_SESSION_CODE, NO_SESSION_MESSAGE } from '../../src/agent-api/client.js';
import { AgentApiError } from '../../src/core/errors.js';
import { cleanup, dumpAll, testRedis } from '../support/redis-helpers.js';
import { caller, setup, text } from './setup.js';

const { redis, prefix } = testRedis();
afterAll(() => cleanup(redis, prefix));

const VALUE = 'sk-live-Zq9"x/y+z=w&ü-0123456789';
/** The value in each form it could take inside JSON, a URL or a log line. */
const FORMS = [VALUE, JSON.stringify(VALUE).slice(1, -1), encodeURIComponent(VALUE), 'Zq9'];

function expectNoValue(haystack: string): void {
  for (const form of FORMS) expect(haystack).not.toContain(form);
}

/** Every place the value must never reach: the reply, the audit log, the log lines, every key and value in Redis. */
async function everywhere(t: ReturnType<typeof setup>, reply: unknown): Promise<string> {
  const audit = JSON.stringify(await t.audit.recent(100));
  return [JSON.stringify(reply), audit, ...t.lines, ...(await dumpAll(redis, t.p))].join('\n');
}

describe('credential', () => {
  it('adds the credential at once and confirms with the key name only', async () => {
    const t = setup(redis, prefix);
    let registeredDuringCall = false;
    t.agentApi.onAdd = (_id, _key, value) => {
      registeredDuringCall = t.secrets.redact(`x ${value} x`) === 'x [REDACTED] x';
    };
    const r = await t.commands.credential(caller, 'inst_a', 'OPENAI_API_KEY', VALUE);
    expect(r).toEqual({ ok: true, title: 'Credential added', lines: ['Added credential `OPENAI_API_KEY` to instance `inst_a`.'] });
    expect(t.agentApi.added).toEqual([{ instanceId: 'inst_a', key: 'OPENAI_API_KEY', value: VALUE }]);
    expect(registeredDuringCall).toBe(true);
    // Released afterwards: the registry does not keep the value.
    expect(t.secrets.redact(VALUE)).toBe(VALUE);
    expect(await t.audit.recent(1)).toMatchObject([
      { action: 'credential', actor: 'UADMIN', instanceId: 'inst_a', key: 'OPENAI_API_KEY', outcome: 'ok', platform: 'slack', channelId: 'C1' },
    ]);
    expect(t.lines.some((l) => l.includes('credential added') && l.includes('OPENAI_API_KEY'))).toBe(true);
    expectNoValue(await everywhere(t, r));
  });

  it.each(['', '1KEY', 'has space', 'x'.repeat(129), 'KEY;DROP', 'ключ', VALUE])('refuses the key name %j without calling the service or echoing it', async (key) => {
    const t = setup(redis, prefix);
    const r = await t.commands.credential(caller, 'inst_a', key, VALUE);
    expect(r.ok).toBe(false);
    expect(text(r)).toContain('key name is not valid');
    expect(t.agentApi.added).toEqual([]);
    if (key.length > 3) expect(text(r)).not.toContain(key);
    expect((await t.audit.recent(1))[0]).toMatchObject({ outcome: 'failed', detail: 'invalid key name' });
    expect((await t.audit.recent(1))[0]).not.toHaveProperty('key');
    expectNoValue(await everywhere(t, r));
  });

  it('records the value\'s fingerprint before the value leaves, so every process can redact it', async () => {
    const order: string[] = [];
    const t = setup(redis, prefix, { credentialFingerprints: { add: async (v) => void order.push(`fingerprint ${v === VALUE}`) } });
    t.agentApi.onAdd = () => void order.push('sent');
    expect((await t.commands.credential(caller, 'inst_a', 'OPENAI_API_KEY', VALUE)).ok).toBe(true);
    expect(order).toEqual(['fingerprint true', 'sent']);
  });

  it('does not send a value whose fingerprint could not be recorded, and says why', async () => {
    const t = setup(redis, prefix, {
      credentialFingerprints: {
        add: async () => {
          throw new Error(`Connection is closed (${VALUE})`);
        },
      },
    });
    const r = await t.commands.credential(caller, 'inst_a', 'OPENAI_API_KEY', VALUE);
    expect(r.ok).toBe(false);
    expect(text(r)).toMatch(/could not record .* so it was not sent/);
    expect(t.agentApi.added).toEqual([]);
    expect((await t.audit.recent(1))[0]).toMatchObject({ outcome: 'failed', key: 'OPENAI_API_KEY', detail: 'fingerprint not recorded (Redis)' });
    expectNoValue(await everywhere(t, r));
  });

  it('accepts key names with digits, dots, dashes and underscores', async () => {
    const t = setup(redis, prefix);
    expect((await t.commands.credential(caller, 'inst_a', 'a.B-c_9', VALUE)).ok).toBe(true);
    expect((await t.commands.credential(caller, 'inst_a', `K${'x'.repeat(127)}`, VALUE)).ok).toBe(true);
  });

  it.each(['', '   ', '\n'])('refuses an empty value %j', async (value) => {
    const t = setup(redis, prefix);
    const r = await t.commands.credential(caller, 'inst_a', 'KEY', value);
    expect(r).toMatchObject({ ok: false, lines: ['The credential value is empty. Enter the secret value and try again.'] });
    expect(t.agentApi.added).toEqual([]);
  });

  it('asks for an instance ID', async () => {
    const t = setup(redis, prefix);
    expect(text(await t.commands.credential(caller, ' ', 'KEY', VALUE))).toContain('/agent credential <instance-id>');
  });

  it.each([
    [
      'no dashboard session',
      new AgentApiError('unauthorized', NO_SESSION_MESSAGE, { code: NO_SESSION_CODE }),
      'adding credentials needs a dashboard session: set AGENT_SESSION_COOKIE (or AGENT_SESSION_TOKEN) where the bridge runs.',
      true,
    ],
    // The code decides, not the wording: a refusal that mentions the session is still a refusal.
    [
      'a refused session (no code)',
      new AgentApiError('forbidden', 'the dashboard session may not add credentials', { status: 403 }),
      'The agent service refused the dashboard session (it may have expired): the dashboard session may not add credentials',
      true,
    ],
    ['unknown instance', new AgentApiError('not_found', 'the agent service answered 404', { status: 404 }), 'No instance with ID `inst_a`. Run /agent instances to see them.'],
    ['an expired session', new AgentApiError('unauthorized', 'the agent service answered 401: session expired', { status: 401 }), 'The agent service refused the dashboard session (it may have expired): the agent service answered 401: session expired', true],
    ['a refusal', new AgentApiError('bad_request', 'key already exists', { status: 409 }), 'The agent service refused: key already exists'],
    ['a timeout', new AgentApiError('timeout', 'no answer within 15000 ms'), "The agent service didn't answer in time. The credential may or may not have been added: check the instance before trying again."],
    ['rate limiting', new AgentApiError('rate_limited', 'slow down', { status: 429, retryAfterMs: 120_000 }), 'The agent service is rate limiting us; try again in 2 minutes.'],
    ['anything else', new TypeError('fetch failed'), 'Something went wrong while talking to the agent service.'],
  ] as Array<[string, Error, string, boolean?]>)('maps %s to words an admin can act on', async (_name, err, words, session) => {
    const t = setup(redis, prefix);
    t.agentApi.addError = err;
    const r = await t.commands.credential(caller, 'inst_a', 'OPENAI_API_KEY', VALUE);
    // A session problem is none of the form's fields: a form shows it as a whole.
    expect(r).toEqual({ ok: false, title: 'Add a credential', lines: [words], ...(session ? { wholeForm: true } : {}) });
    expect((await t.audit.recent(1))[0]).toMatchObject({ action: 'credential', key: 'OPENAI_API_KEY', outcome: 'failed', detail: words });
    const ref = t.lines.find((l) => l.includes('adding a credential failed'));
    expect(ref).toBeDefined();
    expectNoValue(await everywhere(t, r));
  });

  it('scrubs the value even from an error message that should never have carried it', async () => {
    const t = setup(redis, prefix);
    t.agentApi.addError = new AgentApiError('bad_request', `value ${VALUE} rejected (${encodeURIComponent(VALUE)})`, { status: 400 });
    const r = await t.commands.credential(caller, 'inst_a', 'KEY', VALUE);
    expect(r.lines[0]).toBe('The agent service refused: value [REDACTED] rejected ([REDACTED])');
    expectNoValue(await everywhere(t, r));
  });

  it('says so when the service does not confirm', async () => {
    const t = setup(redis, prefix);
    t.agentApi.addResult = { success: false, key: 'KEY' };
    const r = await t.commands.credential(caller, 'inst_a', 'KEY', VALUE);
    expect(r).toMatchObject({ ok: false, lines: ['The agent service did not confirm that the credential was added.'] });
    expectNoValue(await everywhere(t, r));
  });

  it('still confirms when the audit write fails, and logs no value', async () => {
    const t = setup(redis, prefix);
    t.audit.record = async (e) => {
      throw new Error(`audit down ${JSON.stringify(e)}`);
    };
    const r = await t.commands.credential(caller, 'inst_a', 'KEY', VALUE);
    expect(r.ok).toBe(true);
    expect(t.lines.some((l) => l.includes('could not write the audit entry'))).toBe(true);
    expectNoValue(t.lines.join('\n'));
  });

  it('leaves no trace of the value in Redis after a mix of commands', async () => {
    const t = setup(redis, prefix);
    await t.commands.bind(caller, 'inst_a');
    await t.commands.credential(caller, 'inst_a', 'A_KEY', VALUE);
    await t.commands.credential(caller, 'inst_zz', 'B_KEY', VALUE);
    await t.commands.credential(caller, 'inst_a', VALUE, VALUE);
    await t.commands.status(caller);
    await t.commands.why(caller);
    const shown = await t.commands.audit(caller);
    expect(shown.table?.rows.map((row) => row[5])).toEqual(['', 'B_KEY', 'A_KEY', '']);
    expectNoValue(await everywhere(t, shown));
  });
});
