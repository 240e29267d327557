import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dumpKeys } from '../support/redis-cleanup.js';
import { expectAuditTrail } from '../support/audit-trail.js';
import type { EmuChannel, EmuUser, Json } from '../emulators/discord/index.js';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';

/**
 * Issue 9 end to end on Discord: `/agent why`, quotas, the audit log, the error policy and thread
 * context, through the real discord.js client against the emulator, real Redis, the core worker
 * and the agent emulator. The agent answers `ok: <last line of the prompt>`, so transcripts stay
 * short and exact.
 */
const lastLine = (prompt: string) => prompt.split('\n').at(-1) ?? '';
const agentReply = (_id: string, message: string) => `ok: ${lastLine(message).slice(0, 24)}`;
const ENV = { QUOTA_USER_PER_MINUTE: '2', THREAD_CONTEXT_MAX_MESSAGES: '3', THREAD_CONTEXT_MAX_CHARS: '300' };

let h: DiscordHarness;
const w = () => h.discord.world;

// Each user may send two messages a minute: tests give every sender a fresh member.
let people = 0;
function person(name: string): EmuUser {
  people += 1;
  return { id: `92100000000000${String(people).padStart(4, '0')}`, username: name.toLowerCase().replace(/\s+/g, '.'), globalName: name, roles: [], permissions: '68608' };
}

// A fresh text channel per test, so `why` and usage figures are the test's own.
let channels = 0;
function textChannel(name: string): EmuChannel {
  channels += 1;
  const channel: EmuChannel = { id: `93100000000000${String(channels).padStart(4, '0')}`, type: 0, name, guildId: w().guildId };
  (w().channels as Record<string, EmuChannel>)[name] = channel;
  return channel;
}

/** Runs `/agent <subcommand>` and returns the whole private answer (original and follow-ups). */
async function agent(user: EmuUser, channel: EmuChannel, subcommand: string, options: Record<string, string> = {}): Promise<string> {
  const i = h.discord.runCommand({ user, channel, subcommand, options });
  await h.discord.waitFor(() => i.original?.content, `/agent ${subcommand}`);
  expect(i.original?.flags).toBe(64);
  return [i.original!.content, ...i.followups.map((f) => f.content)].join('\n');
}

const send = (author: EmuUser, channel: EmuChannel, content: string) => h.discord.sendMessage({ author, channel, content });
const ask = (author: EmuUser, channel: EmuChannel, text: string) => send(author, channel, `${mention(h.discord)} ${text}`);
/** The bot's reply (or notice) to a message, matching `text`. */
const replyTo = (m: Json, text: RegExp) => h.discord.waitFor(() => h.discord.repliesTo(m.id).find((r) => text.test(String(r.content))), `reply to ${m.id}`);

const logLines = (msg: RegExp): Array<Record<string, unknown>> => h.logs.matching(msg);
const dropped = (m: Json) => until(() => logLines(/^message dropped$/).find((l) => l.messageId === m.id), `drop of ${m.id} logged`);
const gaveUp = (m: Json) => until(() => logLines(/gave up on a message/).find((l) => l.messageId === m.id), `give-up of ${m.id} logged`);

const chatsWith = (text: string) => h.agent.chatCalls().filter((c) => c.message === text);
const failNextChat = () => h.agent.failNext(1, { status: 400, body: { error: 'bad request' } }, { endpoint: 'chat' });
const warningReactions = (m: Json) => h.discord.calls.filter((c) => c.method === 'PUT' && c.path === `/channels/${m.channel_id}/messages/${m.id}/reactions/⚠️/@me`);
const REF = /\(ref ([A-Z0-9]{6})\)/;

describe('issue 9 on Discord', () => {
  beforeAll(async () => {
    h = await startDiscordBridge({ session: true, agent: { reply: agentReply }, env: ENV });
  });
  afterAll(async () => h?.close());

  describe('/agent why', () => {
    it('explains each unanswered message of a bound channel, newest first, the refusal with the ref the user saw', async () => {
      const general = w().channels.general;

      const ann = person('Ann Chatter');
      const chat = send(ann, general, 'just chatting, not for the bot');
      expect((await dropped(chat)).reason).toBe('not_addressed');

      const beep = send(w().users.otherBot, general, `${mention(h.discord)} beep`);
      expect((await dropped(beep)).reason).toBe('bot');

      const bea = person('Bea Busy');
      for (const n of [1, 2]) await replyTo(ask(bea, general, `question ${n}`), new RegExp(`ok: question ${n}`));
      const third = ask(bea, general, 'question 3');
      await replyTo(third, /limit of 2 messages per minute/);
      expect((await dropped(third)).reason).toBe('over_quota');
      expect(chatsWith('question 3')).toHaveLength(0);

      const cy = person('Cy Refused');
      failNextChat();
      const refused = ask(cy, general, 'this gets refused');
      const notice = await replyTo(refused, REF);
      const ref = REF.exec(String(notice.content))![1]!;
      expect((await gaveUp(refused)).ref).toBe(ref);

      const why = await agent(w().users.alice, general, 'why');
      expect(why).toContain('The last 4 messages here that got no answer, newest first:');
      const bullets = why.split('\n').filter((l) => l.startsWith('•'));
      expect(bullets).toHaveLength(4);
      expect(bullets[0]).toMatch(new RegExp(`from \`${cy.id}\`: the agent service refused the message \\(reference \`${ref}\`\\)`));
      expect(bullets[1]).toMatch(new RegExp(`from \`${bea.id}\`: the sender was over their message quota`));
      expect(bullets[2]).toMatch(new RegExp(`from \`${w().users.otherBot.id}\`: it came from another bot`));
      expect(bullets[3]).toMatch(new RegExp(`from \`${ann.id}\`: the bot wasn't addressed`));
      for (const b of bullets) expect(b).toMatch(/^• just now,/);
    });

    it('says an unbound channel is not bound, and lists its messages as such', async () => {
      const nowhere = textChannel('nowhere');
      const dee = person('Dee Early');
      const asked = ask(dee, nowhere, 'anyone here?');
      await replyTo(asked, /isn't connected to an agent yet/);
      const plain = send(dee, nowhere, 'hello?');
      expect((await dropped(asked)).reason).toBe('not_bound');
      expect((await dropped(plain)).reason).toBe('not_bound');

      const why = await agent(w().users.alice, nowhere, 'why');
      expect(why).toContain('This channel is not bound, so the bot answers nothing here.');
      const bullets = why.split('\n').filter((l) => l.startsWith('•'));
      expect(bullets).toEqual([
        expect.stringMatching(new RegExp(`from \`${dee.id}\`: this channel is not bound to an agent instance\\.$`)),
        expect.stringMatching(new RegExp(`from \`${dee.id}\`: this channel is not bound to an agent instance\\.$`)),
      ]);
    });

    it('logs every dropped message at debug level with its reason', () => {
      const drops = logLines(/^message dropped$/);
      // The bot's own replies come back over the gateway: dropped as `self` and logged, but kept out of `why`.
      expect(new Set(drops.map((l) => l.reason))).toEqual(new Set(['not_addressed', 'bot', 'over_quota', 'not_bound', 'self']));
      for (const l of drops) {
        expect(l.level).toBe(20);
        expect(l).toMatchObject({ platform: 'discord', messageId: expect.stringMatching(/^\d{17,20}$/), channelId: expect.stringMatching(/^\d{17,20}$/) });
      }
    });
  });

  describe('quotas', () => {
    it('answers the third mention in a minute with when to try again, without calling the agent', async () => {
      const channel = textChannel('quota-user');
      expect(await agent(w().users.alice, channel, 'bind', { instance: 'demo-helper' })).toContain('Channel bound');
      const eve = person('Eve Eager');
      for (const text of ['quota one', 'quota two']) await replyTo(ask(eve, channel, text), new RegExp(`ok: ${text}`));
      const third = ask(eve, channel, 'quota three');
      const notice = await replyTo(third, /limit/);
      expect(notice.content).toMatch(/^You've reached your limit of 2 messages per minute\. Try again in \d+ seconds?\.$/);
      expect(chatsWith('quota one')).toHaveLength(1);
      expect(chatsWith('quota two')).toHaveLength(1);
      expect(chatsWith('quota three')).toHaveLength(0);
      expect(h.discord.repliesTo(third.id)).toHaveLength(1);

      const status = await agent(w().users.alice, channel, 'status');
      expect(status).toContain('Messages in this channel: no channel limits.');
      expect(status).toContain('Per-user limits: 2 per minute, unlimited per day.');
    });

    it('applies a per-binding override (`set quota-channel-per-day 1`) and shows the usage in `status`', async () => {
      const channel = textChannel('quota-channel');
      await agent(w().users.alice, channel, 'bind', { instance: 'demo-helper' });
      expect(await agent(w().users.alice, channel, 'set', { setting: 'quota-channel-per-day', value: '1' })).toMatch(/Quota `channel-per-day` is now 1 message/);
      expect((await h.bridge.bindings.get('discord', channel.id))?.quota).toEqual({ channelPerDay: 1 });

      await replyTo(ask(person('Fay First'), channel, 'daily one'), /ok: daily one/);
      const second = ask(person('Gus Second'), channel, 'daily two');
      const notice = await replyTo(second, /limit/);
      expect(notice.content).toBe("You've reached the limit of 1 message per day in this channel. Try again in 24 hours.");
      expect(chatsWith('daily two')).toHaveLength(0);

      expect(await agent(w().users.alice, channel, 'status')).toContain('Messages in this channel: 1 this minute (no limit), 1 of 1 this day.');
    });
  });

  describe('audit log', () => {
    it('records bind, credential (key, never the value), unbind and refused attempts; shows them newest first to admins only', async () => {
      const channel = textChannel('audit');
      const { alice, bob } = w().users;
      const canary = `sk-audit-canary-${randomUUID()}`;
      expect(await agent(alice, channel, 'bind', { instance: 'demo-poet' })).toContain('Channel bound');

      const open = h.discord.runCommand({ user: alice, channel, subcommand: 'credential', options: { instance: 'demo-helper' } });
      const modal = await h.discord.waitFor(() => open.responses.find((r) => r.type === 9), 'credential modal');
      const submit = h.discord.submitModal({ user: alice, channel, customId: modal.data.custom_id, fields: { key: 'AUDIT_KEY', value: canary } });
      expect(await h.discord.waitFor(() => submit.original?.content, 'credential answer')).toMatch(/AUDIT_KEY/);
      expect(h.agent.credentials.get('demo-helper')?.get('AUDIT_KEY')).toBe(canary);

      expect(await agent(alice, channel, 'unbind')).toContain('Channel unbound');
      expect(await agent(bob, channel, 'bind', { instance: 'demo-helper' })).toMatch(/Only admins can use \/agent bind/);
      expect(await agent(bob, channel, 'audit')).toMatch(/Only admins can use \/agent audit/);

      const before = Date.now();
      const audit = await agent(alice, channel, 'audit');
      expect(audit).toMatch(/The last \d+ admin actions? in this server, newest first\./);
      expect(audit).toMatch(/When\s+Who\s+Action\s+Channel\s+Instance\s+Key\s+Outcome\s+Detail/);
      expectAuditTrail(audit, { channel: channel.id, admin: `Alice (${alice.id})`, user: `Bob (${bob.id})`, before });

      expect(audit).not.toContain(canary);
      expect(await dumpKeys(h.prefix)).not.toContain(canary);
      expect(h.logs.text).not.toContain(canary);
    });
  });

  describe('error policy per binding (agent refuses the chat call)', () => {
    let channel: EmuChannel;
    beforeAll(async () => {
      channel = textChannel('errors');
      await agent(w().users.alice, channel, 'bind', { instance: 'demo-helper' });
    });

    it('reply (the default): a plain-words message with the reference, and the ⚠️ reaction', async () => {
      expect((await h.bridge.bindings.get('discord', channel.id))?.errorPolicy).toBe('reply');
      failNextChat();
      const m = ask(person('Hal Default'), channel, 'fail by default');
      const notice = await replyTo(m, REF);
      expect(notice.content).toMatch(/^The agent service couldn't accept this message\. \(ref [A-Z0-9]{6}\)$/);
      await h.discord.waitFor(() => warningReactions(m).length === 1, '⚠️ reaction');
    });

    it('reaction: only the ⚠️ own reaction (PUT), nothing posted', async () => {
      expect(await agent(w().users.alice, channel, 'set', { setting: 'errors', value: 'reaction' })).toContain('only adds a warning reaction');
      failNextChat();
      const m = ask(person('Ida Reaction'), channel, 'fail with a reaction');
      await h.discord.waitFor(() => warningReactions(m).length === 1, '⚠️ reaction');
      await gaveUp(m);
      expect(h.discord.repliesTo(m.id)).toHaveLength(0);
    });

    it('silent: nothing in the channel, only the log line', async () => {
      expect(await agent(w().users.alice, channel, 'set', { setting: 'errors', value: 'silent' })).toContain('nothing is shown in the channel');
      failNextChat();
      const m = ask(person('Jo Silent'), channel, 'fail silently');
      expect((await gaveUp(m)).ref).toMatch(/^[A-Z0-9]{6}$/);
      // The channel is one conversation, answered in order: once the next message is answered, the silent one is done.
      await replyTo(ask(person('Lou Barrier'), channel, 'barrier'), /ok: barrier/);
      expect(h.discord.repliesTo(m.id)).toHaveLength(0);
      expect(warningReactions(m)).toHaveLength(0);
    });

    it('reply again after `set errors reply`', async () => {
      expect(await agent(w().users.alice, channel, 'set', { setting: 'errors', value: 'reply' })).toContain('replies in plain words');
      failNextChat();
      const m = ask(person('Kim Reply'), channel, 'fail with words again');
      await replyTo(m, REF);
      await h.discord.waitFor(() => warningReactions(m).length === 1, '⚠️ reaction');
    });
  });

  describe('thread context', () => {
    it('is off by default, then sends a bounded transcript of the thread (its channel messages), speakers labelled', async () => {
      const thread = w().channels.boundThread;
      const history = () => h.discord.calls.filter((c) => c.method === 'GET' && c.path === `/channels/${thread.id}/messages` && c.query.before);
      await agent(w().users.alice, w().channels.bound, 'bind', { instance: 'demo-helper' });
      expect((await h.bridge.bindings.get('discord', w().channels.bound.id))?.context).toBe('off');

      const root = ask(person('Pia Root'), thread, 'what is 2+2?');
      await replyTo(root, /ok: what is 2\+2\?/);
      await replyTo(send(person('Quinn Follow'), thread, 'and times 3?'), /ok: and times 3\?/);
      expect(chatsWith('and times 3?')).toHaveLength(1);
      expect(history()).toHaveLength(0);

      // Run inside the thread: the setting lands on the parent channel's binding.
      expect(await agent(w().users.alice, thread, 'set', { setting: 'context', value: 'thread' })).toContain("with the thread's earlier messages");
      expect((await h.bridge.bindings.get('discord', w().channels.bound.id))?.context).toBe('thread');
      const rex = send(person('Rex Context'), thread, 'and minus 1?');
      await replyTo(rex, /ok: and minus 1\?/);
      // THREAD_CONTEXT_MAX_MESSAGES=3: the root question is cut, the newest three earlier messages stay.
      expect(h.agent.chatCalls().at(-1)!.message).toBe(
        [
          'Earlier messages in this thread:',
          'agent-bridge (bot): ok: what is 2+2?',
          'Quinn Follow: and times 3?',
          'agent-bridge (bot): ok: and times 3?',
          '',
          'New message from Rex Context:',
          'and minus 1?',
        ].join('\n'),
      );
      expect(history().at(-1)?.query).toEqual({ before: rex.id, limit: '3' });

      // THREAD_CONTEXT_MAX_CHARS=300: a long message is left out, the newer short line kept.
      const long = `details ${'x'.repeat(400)}`;
      await replyTo(send(person('Sam Long'), thread, long), /ok: details x/);
      await replyTo(send(person('Tia Last'), thread, 'summary please'), /ok: summary please/);
      const prompt = h.agent.chatCalls().at(-1)!.message;
      expect(prompt).toBe(`Earlier messages in this thread:\nagent-bridge (bot): ok: ${long.slice(0, 24)}\n\nNew message from Tia Last:\nsummary please`);
    });
  });
});

describe('issue 9 on Discord without the Message Content intent', () => {
  beforeAll(async () => {
    h = await startDiscordBridge({ emulator: { allowMessageContent: false }, agent: { reply: agentReply }, env: ENV });
  });
  afterAll(async () => h?.close());

  it('drops unreadable messages as content_missing (logged at debug) and `why` names the missing intent', async () => {
    expect(h.adapter.mentionOnly).toBe(true);
    const general = w().channels.general;
    const plain = send(person('Uma Unread'), general, 'you cannot read this');
    expect((await dropped(plain)).reason).toBe('content_missing');
    expect((await dropped(plain)).level).toBe(20);
    // A mention still carries its text and is answered.
    await replyTo(ask(person('Val Mention'), general, 'can you read me?'), /ok: can you read me\?/);
    expect(h.agent.chatCalls().some((c) => c.message.includes('cannot read'))).toBe(false);

    const why = await agent(w().users.alice, general, 'why');
    const bullets = why.split('\n').filter((l) => l.startsWith('•'));
    expect(bullets).toEqual([
      expect.stringMatching(/the bot could not read the message text: the Discord application needs the Message Content intent turned on\.$/),
    ]);
  });
});
