import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { INPUT_ACTION, KEY_BLOCK, VALUE_BLOCK } from '../../adapters/slack/credential-modal.js';
import { slackSignature } from '../emulators/slack/index.js';
import { botMention, say, startSlackBridge, W, type SlackHarness } from '../slack/harness.js';
import { NASTY, unsafeAgentCalls } from './support/agent-paths.js';
import { pool, sleep, until, watchProcessErrors } from './support/guards.js';
import { figures } from './support/ledger.js';

/**
 * Malformed but correctly signed requests to POST /slack/events (the real Bolt app on the
 * shared HTTP server): random and truncated JSON, odd event envelopes, slash commands and
 * interactivity payloads with wrong types, huge, empty and odd text. The server always answers
 * (2xx or 4xx), never crashes or rejects unhandled, keeps answering real messages, and no
 * request reaches the agent service with an unescaped path.
 */
let h: SlackHarness;
const guard = watchProcessErrors();
const statuses = new Map<number, number>();
const sentIds = new Set<string>(['demo-helper']);

beforeAll(async () => {
  h = await startSlackBridge({ mode: 'http', env: { LOG_LEVEL: 'debug' }, agent: { reply: (_id, m) => `echo: ${m.slice(0, 50)}` } });
  for (const id of NASTY.filter((s) => s.trim() && s.length < 300 && s !== '.' && s !== '..')) h.agent.instances.push({ id, name: 'odd', status: 'running', type: 'assistant' });
});
afterAll(async () => {
  guard.stop();
  await h?.close();
});

/** A signed POST with any body and content type, as Slack would sign it. */
async function post(body: string, contentType: string, extra: Record<string, string> = {}): Promise<number> {
  const ts = Math.floor(Date.now() / 1000);
  const res = await fetch(h.eventsUrl, {
    method: 'POST',
    // Slack gives up after 3 s; anything past 10 s is a hang.
    signal: AbortSignal.timeout(10_000),
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': slackSignature(h.slack.identity.signingSecret, ts, body),
      ...extra,
    },
    body,
  });
  await res.arrayBuffer();
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  return res.status;
}

/**
 * Sends every case, 32 at a time: Bolt holds a request nobody acknowledges for 3 s before its
 * 404, so one by one would take minutes. Failures are collected with their input.
 */
async function fuzz<T>(cases: T[], send: (c: T) => Promise<number>): Promise<void> {
  const failures: string[] = [];
  await pool(cases, 32, async (c) => {
    try {
      const status = await send(c);
      if (status >= 500) failures.push(`${status} for ${JSON.stringify(c).slice(0, 300)}`);
    } catch (err) {
      failures.push(`${(err as Error).name} for ${JSON.stringify(c).slice(0, 300)}`);
    }
  });
  expect(failures).toEqual([]);
}

const odd = fc.oneof(
  fc.constantFrom<unknown>(...NASTY, '', ' ', null, 0, -1, 1.5, true, [], {}, [null], { ts: 1 }, 'x'.repeat(40_000)),
  // Objects that break String(x) and template literals, and prototype-looking keys.
  fc.constantFrom<unknown>({ toString: [] }, { toString: null, valueOf: null }, JSON.parse('{"__proto__":{"polluted":1}}'), { constructor: { prototype: 1 } }),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.jsonValue({ maxDepth: 2 }),
);
/** Form fields are text: odd values as the text they would be sent as. */
const oddText = odd.map((x) => {
  try {
    return typeof x === 'string' ? x : JSON.stringify(x) ?? String(x);
  } catch {
    return '[object]';
  }
});
const slackId = fc.oneof(fc.constantFrom(W.general, W.dm, W.user, W.admin, 'C', 'C0GENERAL/../x', '', 'D0USER001'), odd);
const slackTs = fc.oneof(fc.constantFrom('1700000000.000100', '1700000000.1', '0.0', '.', '1e9', '-1.5', '99999999999999.9'), odd);

const event = fc.record(
  {
    type: fc.oneof(fc.constantFrom('message', 'app_mention', 'reaction_added', 'member_joined_channel'), odd),
    subtype: fc.oneof(fc.constantFrom('bot_message', 'message_changed', 'file_share', 'thread_broadcast'), odd),
    channel: slackId,
    channel_type: fc.oneof(fc.constantFrom('im', 'channel', 'mpim', 'group'), odd),
    user: slackId,
    bot_id: odd,
    text: fc.oneof(fc.constantFrom(...NASTY).map((s) => `<@UBOT0001> ${s}`), odd),
    ts: slackTs,
    thread_ts: slackTs,
    edited: odd,
    files: odd,
    parent_user_id: slackId,
    user_profile: odd,
  },
  { requiredKeys: [] },
);

const envelope = fc.record(
  {
    type: fc.oneof(fc.constant('event_callback'), fc.constant('url_verification'), odd),
    team_id: odd,
    api_app_id: odd,
    event: fc.oneof(event, odd),
    event_id: odd,
    event_time: odd,
    challenge: odd,
    authorizations: odd,
  },
  { requiredKeys: [] },
);

describe('Slack ingress on malformed signed requests', () => {
  it('Events API: random JSON, odd envelopes and truncated bodies', async () => {
    const cases = fc.sample(fc.tuple(envelope, fc.nat(), fc.constantFrom('whole', 'cut', 'wrong-type')), { numRuns: 400, seed: 1101 });
    await fuzz(cases, async ([env, cut, how]) => {
      const json = JSON.stringify(env);
      const body = how === 'cut' ? json.slice(0, cut % Math.max(1, json.length)) : json;
      return post(body, how === 'wrong-type' ? 'text/plain' : 'application/json');
    });
  }, 120_000);

  it('slash commands: odd fields and command text, from admins and others', async () => {
    const fields = fc.record({
      command: fc.oneof(fc.constant('/agent'), fc.constantFrom('/other', '', '/AGENT', '/agent/..')),
      text: fc.oneof(fc.constantFrom(...NASTY).chain((s) => fc.constantFrom(`bind ${s}`, `credential ${s}`, `bind ${s} all`, `set errors ${s}`, s)), fc.string({ maxLength: 100 })),
      user_id: fc.oneof(fc.constantFrom(W.admin, W.user, W.owner), oddText),
      channel_id: fc.oneof(fc.constantFrom(W.general, W.dm, 'C0FUZZ001'), oddText),
      channel_name: fc.oneof(fc.constantFrom('general', 'directmessage'), oddText),
      team_id: fc.oneof(fc.constant('T0EMU'), oddText),
      trigger_id: fc.oneof(fc.constant('bogus-trigger'), oddText),
      response_url: fc.constantFrom(`${h.slack.baseUrl}/respond/RNOPE`, 'not a url', '', 'http://127.0.0.1:9/x'),
    }, { requiredKeys: ['command'] });
    const cases = fc.sample(fc.tuple(fields, fc.boolean()), { numRuns: 200, seed: 2202 });
    await fuzz(cases, async ([f, cut]) => {
      const body = new URLSearchParams(Object.entries(f).map(([k, v]) => [k, String(v)])).toString();
      return post(cut ? body.slice(0, body.length >> 1) : body, 'application/x-www-form-urlencoded');
    });
  }, 120_000);

  it('interactivity: random payloads, broken JSON, and credential forms with odd keys, values and metadata', async () => {
    const view = fc.record({
      id: fc.oneof(fc.constant('VNOPE'), odd),
      callback_id: fc.constantFrom('agent_bridge_credential', 'agent_bridge_credential_done', 'other', ''),
      private_metadata: fc.oneof(
        fc.constantFrom(...NASTY).map((i) => JSON.stringify({ i, c: W.general })),
        odd.map((x) => JSON.stringify(x)),
        fc.constantFrom('{', '', 'null', '{"i":5,"c":[]}'),
      ),
      state: fc.oneof(
        fc.record({ values: fc.record({ [KEY_BLOCK]: fc.record({ [INPUT_ACTION]: fc.record({ value: odd }) }), [VALUE_BLOCK]: fc.record({ [INPUT_ACTION]: fc.record({ value: odd }) }) }, { requiredKeys: [] }) }),
        odd,
      ),
    }, { requiredKeys: [] });
    const payload = fc.record({
      type: fc.oneof(fc.constantFrom('view_submission', 'block_actions', 'shortcut', 'message_action', 'view_closed'), odd),
      user: fc.oneof(fc.record({ id: fc.constantFrom(W.admin, W.user) }), odd),
      team: fc.oneof(fc.record({ id: fc.constant('T0EMU') }), odd),
      view: fc.oneof(view, odd),
      actions: odd,
      callback_id: odd,
      trigger_id: odd,
    }, { requiredKeys: [] });
    const cases = fc.sample(fc.tuple(payload, fc.constantFrom('json', 'cut', 'garbage', 'missing')), { numRuns: 300, seed: 3303 });
    await fuzz(cases, async ([pl, how]) => {
      const meta = (pl as { view?: { private_metadata?: unknown } }).view?.private_metadata;
      try {
        const i = typeof meta === 'string' ? (JSON.parse(meta) as { i?: unknown } | null)?.i : undefined;
        if (typeof i === 'string') sentIds.add(i.trim());
      } catch {
        // not JSON: no instance ID to expect
      }
      const json = JSON.stringify(pl);
      const value = how === 'json' ? json : how === 'cut' ? json.slice(0, json.length >> 1) : how === 'garbage' ? '}{\u0000' : undefined;
      const body = value === undefined ? 'nothing=here' : new URLSearchParams({ payload: value }).toString();
      return post(body, 'application/x-www-form-urlencoded');
    });
  }, 120_000);

  it('credential forms submitted by an admin with nasty instance IDs and keys: answered, escaped, value kept secret', async () => {
    const submission = fc.record({
      id: fc.oneof(fc.constantFrom(...NASTY), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 })),
      key: fc.oneof(fc.constantFrom('GOOD_KEY', 'a.b-c_d', ...NASTY), fc.string({ maxLength: 40 })),
      value: fc.uuid().map((u) => `fz-${u}-value`),
    });
    const cases = fc.sample(submission, { numRuns: 120, seed: 4404 });
    for (const c of cases) sentIds.add(c.id.trim());
    const before = h.agent.calls.filter((c) => c.endpoint === 'credentials').length;
    await fuzz(cases, async ({ id, key, value }) => {
      const payload = {
        type: 'view_submission',
        team: { id: 'T0EMU', domain: 'emulated' },
        user: { id: W.admin, username: 'ada', name: 'ada', team_id: 'T0EMU' },
        api_app_id: h.slack.identity.appId,
        view: {
          id: 'VFUZZ',
          callback_id: 'agent_bridge_credential',
          private_metadata: JSON.stringify({ i: id, c: W.general }),
          state: { values: { [KEY_BLOCK]: { [INPUT_ACTION]: { type: 'plain_text_input', value: key } }, [VALUE_BLOCK]: { [INPUT_ACTION]: { type: 'plain_text_input', value } } } },
        },
      };
      return post(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), 'application/x-www-form-urlencoded');
    });
    const reached = h.agent.calls.filter((c) => c.endpoint === 'credentials').length - before;
    figures('fuzz-slack-credentials', { submissions: cases.length, reachedService: reached, stored: [...h.agent.credentials.values()].reduce((n, m) => n + m.size, 0) });
    expect(reached).toBeGreaterThan(0);
    for (const { value } of cases) {
      expect(h.logs.text).not.toContain(value);
      for (const call of h.slack.calls) expect(call.rawBody).not.toContain(value);
    }
    expect(unsafeAgentCalls(h.agent.calls, sentIds)).toEqual([]);
  }, 60_000);

  it('chat messages with empty, whitespace-only, huge, control, RTL, emoji and combining text: one clear answer each', async () => {
    const texts = ['', '   ', '\t\n ', '\u0000\u0007', 'x'.repeat(8_000), 'y'.repeat(8_001), 'z'.repeat(39_000), '\u202Eevil\u202C', 'עברית ومرحبا', '👨‍👩‍👧🙂', 'a\u0300\u0301\u0302', '```', '<!channel> <@U000> &lt;', ...NASTY.slice(0, 12)];
    const sent: Array<{ text: string; ts: string }> = [];
    for (const text of texts) {
      const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `<@${h.slack.identity.botUserId}> ${text}` });
      await h.to.event(m.mention);
      await h.to.event(m.message);
      sent.push({ text, ts: m.ts });
    }
    const answers = (ts: string) => h.slack.posted((c) => c.params.thread_ts === ts);
    await until(() => sent.every((x) => answers(x.ts).length > 0), 'every odd message answered', 20_000);
    await sleep(800);
    const kinds = sent.map((x) => {
      const [a] = answers(x.ts);
      const t = a?.params.text ?? '';
      return t.startsWith('echo:') ? 'reply' : /characters long/.test(t) ? 'too long' : /Mention me with a question/.test(t) ? 'hint' : `other: ${t.slice(0, 60)}`;
    });
    figures('fuzz-slack-chat-text', { messages: sent.length, kinds: kinds.reduce<Record<string, number>>((acc, k) => ((acc[k] = (acc[k] ?? 0) + 1), acc), {}) });
    for (const [i, x] of sent.entries()) {
      expect(answers(x.ts), JSON.stringify(x.text.slice(0, 40))).toHaveLength(1);
      expect(kinds[i]).not.toMatch(/^other/);
    }
    // Longer than MAX_MESSAGE_CHARS (8000): a notice, and the agent is not asked.
    expect(kinds[texts.indexOf('y'.repeat(8_001))]).toBe('too long');
    expect(kinds[texts.indexOf('   ')]).toBe('hint');
    for (const c of h.slack.posted()) expect(c.pings).toEqual([]);
  }, 60_000);

  it('afterwards: still answers, nothing crashed, every agent path escaped', async () => {
    // Bodies at and past any sane size are refused or ignored, not fatal.
    expect(await post(`{"type":"event_callback","event":{"type":"message","text":"${'y'.repeat(2_000_000)}"}}`, 'application/json')).toBeLessThan(500);
    const m = await say(h, { channel: W.general, text: `${botMention(h)} still alive after the fuzz?` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && (c.params.text ?? '').includes('still alive'), 15_000);
    // Let listeners that run after the ack finish.
    await until(() => h.agent.hangingCount() === 0, 'agent idle', 5_000);
    const bad = unsafeAgentCalls(h.agent.calls, sentIds);
    const failures = h.logs.lines.filter((l) => /Slack listener failed|command failed|could not hand/.test(l));
    figures('fuzz-slack', {
      requests: [...statuses.values()].reduce((a, b) => a + b, 0),
      statuses: Object.fromEntries(statuses),
      agentCalls: h.agent.calls.length,
      credentialCalls: h.agent.calls.filter((c) => c.endpoint === 'credentials').length,
      unsafePaths: bad.length,
      listenerFailures: failures.length,
    });
    expect(bad).toEqual([]);
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    expect(guard.errors).toEqual([]);
  }, 60_000);
});
