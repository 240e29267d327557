import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INPUT_ACTION, KEY_BLOCK, VALUE_BLOCK } from '../../adapters/slack/credential-modal.js';
import { dumpKeys } from '../support/redis-cleanup.js';
import { expectAuditTrail } from '../support/audit-trail.js';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * Issue 9 end to end on Slack: `/agent why`, quotas, the audit log, the error policy and thread
 * context, through real Bolt (HTTP and Socket Mode), real Redis, the core worker and the agent emulator.
 * The agent answers `ok: <last line of the prompt>`, so transcripts stay short and exact.
 */
const lastLine = (prompt: string) => prompt.split('\n').at(-1) ?? '';

let h: SlackHarness;

// Each user may send two messages a minute: tests give every sender a fresh user.
let people = 0;
function person(name: string): string {
  people += 1;
  const id = `U0B${String(people).padStart(5, '0')}`;
  h.slack.addUser({ id, name });
  return id;
}

/** Runs `/agent <text>` and returns the ephemeral answer's text (Block Kit sections joined). */
async function agent(text: string, user: string, channel: string): Promise<string> {
  const ack = await h.to.command({ text, user, channel });
  expect(ack.acked).toBe(true);
  const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
  expect(call.params.response_type).toBe('ephemeral');
  const blocks = JSON.parse(call.params.blocks ?? '[]') as Array<{ text?: { text?: string } }>;
  return blocks.map((b) => b.text?.text ?? '').join('\n');
}

const messageId = (channel: string, ts: string) => `${channel}:${ts}`;

/** The debug line of a dropped message, once written. */
const dropped = (channel: string, ts: string) =>
  until(() => logLines(h, /^message dropped$/).find((l) => l.messageId === messageId(channel, ts)), `drop of ${ts} logged`);

/** A reply or notice the bot posted in the message's thread, matching `text`. */
const postedIn = (channel: string, ts: string, text: RegExp) =>
  h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === channel && c.params.thread_ts === ts && text.test(c.params.text ?? ''));

const chatsWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message === text);
const failNextChat = () => h.agent.failNext(1, { status: 400, body: { error: 'bad request' } }, { endpoint: 'chat' });
const REF = /\(ref ([A-Z0-9]{6})\)/;

describe.each(['http', 'socket'] as const)('issue 9 on Slack over %s', (mode) => {
  beforeAll(async () => {
    h = await startSlackBridge({
      mode,
      agent: { reply: (_id, message) => `ok: ${lastLine(message).slice(0, 24)}` },
      env: { QUOTA_USER_PER_MINUTE: '2', THREAD_CONTEXT_MAX_MESSAGES: '3', THREAD_CONTEXT_MAX_CHARS: '300' },
    });
  });
  afterAll(async () => h?.close());

  describe('/agent why', () => {
    it('explains each unanswered message of a bound channel, newest first, the refusal with the ref the user saw', async () => {
      const channel = 'C0WHY0001';
      expect(await agent('bind demo-helper', W.admin, channel)).toContain('Channel bound');

      // Not addressed: no mention in a channel bound with mode `mention`.
      const ann = person('Ann Chatter');
      const chat = await say(h, { channel, user: ann, text: 'just chatting, not for the bot' });
      expect((await dropped(channel, chat.ts)).reason).toBe('not_addressed');

      // Another bot's message.
      const beep = h.slack.userMessage({ channel, user: 'unused', botId: 'B0OTHER01', subtype: 'bot_message', text: `${botMention(h)} beep` });
      await h.to.event(beep.message);
      expect((await dropped(channel, beep.ts)).reason).toBe('bot');

      // Over quota: the third mention of one user in a minute.
      const bea = person('Bea Busy');
      for (const n of [1, 2]) {
        await say(h, { channel, user: bea, text: `${botMention(h)} question ${n}` });
        await h.agent.waitForCalls(1, (c) => c.endpoint === 'chat' && (c.json as { message?: string }).message === `question ${n}`);
      }
      const third = await say(h, { channel, user: bea, text: `${botMention(h)} question 3` });
      await postedIn(channel, third.ts, /limit of 2 messages per minute/);
      expect((await dropped(channel, third.ts)).reason).toBe('over_quota');
      expect(chatsWith('question 3')).toHaveLength(0);

      // The agent service refuses: the user sees a reference, and `why` names the same one.
      const cy = person('Cy Refused');
      failNextChat();
      const refused = await say(h, { channel, user: cy, text: `${botMention(h)} this gets refused` });
      const notice = await postedIn(channel, refused.ts, REF);
      const ref = REF.exec(notice.params.text!)![1]!;
      const gaveUp = await until(() => logLines(h, /gave up on a message/).find((l) => l.messageId === messageId(channel, refused.ts)), 'give-up logged');
      expect(gaveUp.ref).toBe(ref);

      const why = await agent('why', W.admin, channel);
      expect(why).toContain('The last 4 messages here that got no answer, newest first:');
      const bullets = why.split('\n').filter((l) => l.startsWith('•'));
      expect(bullets).toHaveLength(4);
      expect(bullets[0]).toMatch(new RegExp(`from \`${cy}\`: the agent service refused the message \\(reference \`${ref}\`\\)`));
      expect(bullets[1]).toMatch(new RegExp(`from \`${bea}\`: the sender was over their message quota`));
      expect(bullets[2]).toMatch(/from `B0OTHER01`: it came from another bot/);
      expect(bullets[3]).toMatch(new RegExp(`from \`${ann}\`: the bot wasn't addressed`));
      for (const b of bullets) expect(b).toMatch(/^• just now,/);
    });

    it('says an unbound channel is not bound, and lists its messages as such', async () => {
      const channel = W.free;
      const dee = person('Dee Early');
      const asked = await say(h, { channel, user: dee, text: `${botMention(h)} anyone here?` });
      await postedIn(channel, asked.ts, /isn't connected to an agent yet/);
      const plain = await say(h, { channel, user: dee, text: 'hello?' });
      expect((await dropped(channel, asked.ts)).reason).toBe('not_bound');
      expect((await dropped(channel, plain.ts)).reason).toBe('not_bound');

      const why = await agent('why', W.admin, channel);
      expect(why).toContain('This channel is not bound, so the bot answers nothing here.');
      const bullets = why.split('\n').filter((l) => l.startsWith('•'));
      expect(bullets).toEqual([
        expect.stringMatching(new RegExp(`from \`${dee}\`: this channel is not bound to an agent instance\\.$`)),
        expect.stringMatching(new RegExp(`from \`${dee}\`: this channel is not bound to an agent instance\\.$`)),
      ]);
    });

    it('logs every dropped message at debug level with its reason', () => {
      const drops = logLines(h, /^message dropped$/);
      expect(new Set(drops.map((l) => l.reason))).toEqual(new Set(['not_addressed', 'bot', 'over_quota', 'not_bound']));
      for (const l of drops) {
        expect(l.level).toBe(20);
        expect(l).toMatchObject({ platform: 'slack', messageId: expect.stringMatching(/^C0[A-Z0-9]+:\d+\.\d+$/), channelId: expect.any(String) });
      }
    });
  });

  describe('quotas', () => {
    it('answers the third mention in a minute with when to try again, without calling the agent', async () => {
      const channel = 'C0QUOTA01';
      expect(await agent('bind demo-helper', W.admin, channel)).toContain('Channel bound');
      const eve = person('Eve Eager');
      for (const text of ['quota one', 'quota two']) {
        const m = await say(h, { channel, user: eve, text: `${botMention(h)} ${text}` });
        await postedIn(channel, m.ts, new RegExp(`ok: ${text}`));
      }
      const third = await say(h, { channel, user: eve, text: `${botMention(h)} quota three` });
      const notice = await postedIn(channel, third.ts, /limit/);
      expect(notice.params.text).toMatch(/^You've reached your limit of 2 messages per minute\. Try again in \d+ seconds?\.$/);
      expect(chatsWith('quota one')).toHaveLength(1);
      expect(chatsWith('quota two')).toHaveLength(1);
      expect(chatsWith('quota three')).toHaveLength(0);
      expect(postsIn(h, channel, third.ts)).toHaveLength(1);

      // No channel limit here: status says so, and shows the per-user limits in force.
      const status = await agent('status', W.admin, channel);
      expect(status).toContain('Messages in this channel: no channel limits.');
      expect(status).toContain('Per-user limits: 2 per minute, unlimited per day.');
    });

    it('applies a per-binding override (`set quota channel-per-day 1`) and shows the usage in `status`', async () => {
      const channel = 'C0QUOTA02';
      await agent('bind demo-helper', W.admin, channel);
      expect(await agent('set quota channel-per-day 1', W.admin, channel)).toMatch(/Quota `channel-per-day` is now 1 message/);
      expect((await h.bridge.bindings.get('slack', channel))?.quota).toEqual({ channelPerDay: 1 });

      const first = await say(h, { channel, user: person('Fay First'), text: `${botMention(h)} daily one` });
      await postedIn(channel, first.ts, /ok: daily one/);
      const second = await say(h, { channel, user: person('Gus Second'), text: `${botMention(h)} daily two` });
      const notice = await postedIn(channel, second.ts, /limit/);
      expect(notice.params.text).toBe("You've reached the limit of 1 message per day in this channel. Try again in 24 hours.");
      expect(chatsWith('daily two')).toHaveLength(0);

      const status = await agent('status', W.admin, channel);
      expect(status).toContain('Messages in this channel: 1 this minute (no limit), 1 of 1 this day.');
      // Other channels keep the default (no channel limit).
      expect(await agent('status', W.admin, 'C0QUOTA01')).toContain('no channel limits');
    });
  });

  describe('audit log', () => {
    it('records bind, credential (key, never the value), unbind and refused attempts; shows them newest first to admins only', async () => {
      const channel = 'C0AUDIT01';
      const canary = `sk-audit-canary-${randomUUID()}`;
      expect(await agent('bind demo-poet', W.admin, channel)).toContain('Channel bound');

      const ack = await h.to.command({ text: 'credential demo-helper', user: W.admin, channel });
      const open = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
      const viewId = (open.response.view as { id: string }).id;
      const submitted = await h.to.interaction(
        h.slack.viewSubmission(viewId, W.admin, { [KEY_BLOCK]: { [INPUT_ACTION]: 'AUDIT_KEY' }, [VALUE_BLOCK]: { [INPUT_ACTION]: canary } }),
      );
      expect(submitted.body).toMatchObject({ response_action: 'clear' });
      expect(h.agent.credentials.get('demo-helper')?.get('AUDIT_KEY')).toBe(canary);

      expect(await agent('unbind', W.admin, channel)).toContain('Channel unbound');
      expect(await agent('bind demo-helper', W.user, channel)).toContain('Only admins can use /agent bind');
      expect(await agent('audit', W.user, channel)).toContain('Only admins can use /agent audit');

      const before = Date.now();
      const audit = await agent('audit', W.admin, channel);
      expect(audit).toMatch(/The last \d+ admin actions? in this workspace, newest first\./);
      expect(audit).toMatch(/When\s+Who\s+Action\s+Channel\s+Instance\s+Key\s+Outcome\s+Detail/);
      expectAuditTrail(audit, { channel, admin: 'uadmin001 (UADMIN001)', user: 'uuser0001 (UUSER0001)', before });

      // The value is nowhere: not in the audit answer, the Redis stream, or any log line.
      expect(audit).not.toContain(canary);
      expect(await dumpKeys(h.prefix)).not.toContain(canary);
      expect(h.logs.text).not.toContain(canary);

      // A malformed admin command from a non-admin is refused, not explained.
      expect(await agent('bind', W.user, channel)).toContain('Only admins can use /agent bind');
      expect(await agent('credential x y', W.user, channel)).toContain('Only admins can use /agent credential');
    });
  });

  describe('error policy per binding (agent refuses the chat call)', () => {
    const channel = 'C0ERRORS1';
    const warnings = (ts: string) => h.slack.callsOf('reactions.add', (c) => c.params.timestamp === ts && c.params.name === 'warning');
    const gaveUp = (ts: string) => until(() => logLines(h, /gave up on a message/).find((l) => l.messageId === messageId(channel, ts)), 'give-up logged');

    beforeAll(async () => {
      await agent('bind demo-helper', W.admin, channel);
    });

    it('reply (the default): a plain-words message with the reference, and the warning reaction', async () => {
      expect((await h.bridge.bindings.get('slack', channel))?.errorPolicy).toBe('reply');
      failNextChat();
      const m = await say(h, { channel, user: person('Hal Default'), text: `${botMention(h)} fail by default` });
      const notice = await postedIn(channel, m.ts, REF);
      expect(notice.params.text).toMatch(/^The agent service couldn't accept this message\. \(ref [A-Z0-9]{6}\)$/);
      await h.slack.waitForCall('reactions.add', (c) => c.params.timestamp === m.ts && c.params.name === 'warning');
      expect(h.slack.reactionsOn(channel, m.ts)).toEqual(['warning']);
    });

    it('reaction: only the warning reaction (reactions.add), nothing posted', async () => {
      expect(await agent('set errors reaction', W.admin, channel)).toContain('only adds a warning reaction');
      failNextChat();
      const m = await say(h, { channel, user: person('Ida Reaction'), text: `${botMention(h)} fail with a reaction` });
      await h.slack.waitForCall('reactions.add', (c) => c.params.timestamp === m.ts && c.params.name === 'warning');
      await gaveUp(m.ts);
      expect(h.slack.callsOf('chat.postMessage', (c) => c.params.thread_ts === m.ts)).toHaveLength(0);
      expect(h.slack.reactionsOn(channel, m.ts)).toEqual(['warning']);
    });

    it('silent: nothing in the channel, only the log line', async () => {
      expect(await agent('set errors silent', W.admin, channel)).toContain('nothing is shown in the channel');
      failNextChat();
      const m = await say(h, { channel, user: person('Jo Silent'), text: `${botMention(h)} fail silently` });
      const line = await gaveUp(m.ts);
      expect(line.ref).toMatch(/^[A-Z0-9]{6}$/);
      // The working reaction comes off, and nothing else happens.
      await h.slack.waitForCall('reactions.remove', (c) => c.params.timestamp === m.ts && c.params.name === 'eyes');
      expect(h.slack.callsOf('chat.postMessage', (c) => c.params.thread_ts === m.ts)).toHaveLength(0);
      expect(warnings(m.ts)).toHaveLength(0);
      expect(h.slack.reactionsOn(channel, m.ts)).toEqual([]);
    });

    it('reply again after `set errors reply`', async () => {
      expect(await agent('set errors reply', W.admin, channel)).toContain('replies in plain words');
      failNextChat();
      const m = await say(h, { channel, user: person('Kim Reply'), text: `${botMention(h)} fail with words again` });
      await postedIn(channel, m.ts, REF);
      await h.slack.waitForCall('reactions.add', (c) => c.params.timestamp === m.ts && c.params.name === 'warning');
    });
  });

  describe('thread context', () => {
    it('is off by default, then sends a bounded transcript of the thread (conversations.replies), speakers labelled', async () => {
      const channel = 'C0THREAD1';
      await agent('bind demo-helper', W.admin, channel);
      expect((await h.bridge.bindings.get('slack', channel))?.context).toBe('off');

      const root = await say(h, { channel, user: person('Pia Root'), text: `${botMention(h)} what is 2+2?` });
      await postedIn(channel, root.ts, /ok: what is 2\+2\?/);
      await say(h, { channel, user: person('Quinn Follow'), text: 'and times 3?', threadTs: root.ts });
      await postedIn(channel, root.ts, /ok: and times 3\?/);
      // Off: the follow-up went alone, and the thread was never read.
      expect(chatsWith('and times 3?')).toHaveLength(1);
      expect(h.slack.callsOf('conversations.replies', (c) => c.params.channel === channel)).toHaveLength(0);

      expect(await agent('set context thread', W.admin, channel)).toContain("with the thread's earlier messages");
      const rex = person('Rex Context');
      await say(h, { channel, user: rex, text: 'and minus 1?', threadTs: root.ts });
      await postedIn(channel, root.ts, /ok: and minus 1\?/);
      // THREAD_CONTEXT_MAX_MESSAGES=3: the root question is cut, the newest three earlier messages stay.
      expect(chatCalls(h).map((c) => (c.json as { message: string }).message).at(-1)).toBe(
        [
          'Earlier messages in this thread:',
          'agent (bot): ok: what is 2+2?',
          'Quinn Follow: and times 3?',
          'agent (bot): ok: and times 3?',
          '',
          // Named as the earlier lines are (users.info), not by a raw ID.
          'New message from Rex Context:',
          'and minus 1?',
        ].join('\n'),
      );
      expect(h.slack.callsOf('conversations.replies', (c) => c.params.channel === channel && c.params.ts === root.ts).length).toBeGreaterThanOrEqual(1);

      // THREAD_CONTEXT_MAX_CHARS=300: a long message is left out, the newer short lines kept.
      const long = `details ${'x'.repeat(400)}`;
      await say(h, { channel, user: person('Sam Long'), text: long, threadTs: root.ts });
      await postedIn(channel, root.ts, /ok: details x/);
      const tia = person('Tia Last');
      await say(h, { channel, user: tia, text: 'summary please', threadTs: root.ts });
      await postedIn(channel, root.ts, /ok: summary please/);
      const prompt = (chatCalls(h).at(-1)!.json as { message: string }).message;
      expect(prompt).toBe(`Earlier messages in this thread:\nagent (bot): ok: ${long.slice(0, 24)}\n\nNew message from Tia Last:\nsummary please`);
      expect(prompt).not.toContain('x'.repeat(100));
    });
  });
});
