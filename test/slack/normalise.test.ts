import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normaliseSlackEvent, type BotIdentity } from '../../adapters/slack/normalise.js';
import { slackTextToPlain } from '../../adapters/slack/slack-text.js';
import { encodeConversationId } from '../../src/core/conversation.js';

const BOT: BotIdentity = { userId: 'UBOT1', botId: 'BBOT1', teamId: 'T1' };
const envelope = (event: Record<string, unknown>) => ({ type: 'event_callback', team_id: 'T1', event });
const message = (extra: Record<string, unknown> = {}) => ({ type: 'message', channel: 'C1', channel_type: 'channel', user: 'U1', text: 'hi', ts: '1700000000.000100', ...extra });

function normalised(event: Record<string, unknown>) {
  const r = normaliseSlackEvent(envelope(event), BOT, 42);
  if (r.kind !== 'message') throw new Error(`ignored: ${r.reason}`);
  return r.message;
}

describe('normaliseSlackEvent', () => {
  it('starts a thread on a top-level channel message and replies in it', () => {
    const m = normalised(message({ text: '<@UBOT1> hello' }));
    expect(m).toMatchObject({
      platform: 'slack',
      messageId: 'C1:1700000000.000100',
      conversation: { platform: 'slack', workspaceId: 'T1', channelId: 'C1', threadId: '1700000000.000100' },
      bindingChannelId: 'C1',
      userId: 'U1',
      text: 'hello',
      isDirect: false,
      mentionsBot: true,
      fromSelf: false,
      fromBot: false,
      hasAttachments: false,
      reply: { channelId: 'C1', threadId: '1700000000.000100', messageId: '1700000000.000100' },
      receivedAt: 42,
    });
  });

  it('puts a thread reply in the conversation of its thread root', () => {
    const root = normalised(message({ text: '<@UBOT1> q' }));
    const reply = normalised(message({ ts: '1700000000.000200', thread_ts: '1700000000.000100', text: 'more' }));
    expect(encodeConversationId(reply.conversation)).toBe(encodeConversationId(root.conversation));
    expect(reply.reply).toEqual({ channelId: 'C1', threadId: '1700000000.000100', messageId: '1700000000.000200' });
    expect(reply.mentionsBot).toBe(false);
  });

  it("answers a DM inline and binds it through its workspace's `dm:<team>`", () => {
    const m = normalised(message({ channel: 'D1', channel_type: 'im' }));
    expect(m.isDirect).toBe(true);
    expect(m.bindingChannelId).toBe('dm:T1');
    expect(m.conversation.threadId).toBeUndefined();
    expect(m.reply).toEqual({ channelId: 'D1', messageId: '1700000000.000100', inline: true });
  });

  it('gives app_mention and message of one ts the same result', () => {
    const text = '<@UBOT1> same';
    const a = normalised({ type: 'app_mention', channel: 'C1', user: 'U1', text, ts: '1700000000.000100' });
    const b = normalised(message({ text }));
    expect(a).toEqual(b);
  });

  it('marks its own messages and other bots', () => {
    expect(normalised(message({ user: 'UBOT1', bot_id: 'BBOT1' })).fromSelf).toBe(true);
    expect(normalised(message({ user: undefined, bot_id: 'BBOT1', subtype: 'bot_message' })).fromSelf).toBe(true);
    const other = normalised(message({ user: undefined, bot_id: 'BOTHER', subtype: 'bot_message' }));
    expect(other).toMatchObject({ fromSelf: false, fromBot: true, userId: 'BOTHER' });
  });

  it('marks Slackbot (USLACKBOT, no bot_id) as a bot', () => {
    expect(normalised(message({ user: 'USLACKBOT', text: '<@UBOT1> Reminder: standup' }))).toMatchObject({ fromSelf: false, fromBot: true, userId: 'USLACKBOT' });
  });

  it.each(['message_changed', 'message_deleted', 'channel_join', 'message_replied', 'channel_topic'])('ignores subtype %s', (subtype) => {
    expect(normaliseSlackEvent(envelope(message({ subtype })), BOT)).toEqual({ kind: 'ignored', reason: `subtype:${subtype}` });
  });

  it('keeps file_share and thread_broadcast as user messages; files set hasAttachments', () => {
    expect(normalised(message({ subtype: 'file_share', files: [{ id: 'F1' }] })).hasAttachments).toBe(true);
    expect(normalised(message({ subtype: 'thread_broadcast', thread_ts: '1699999999.000001' })).conversation.threadId).toBe('1699999999.000001');
  });

  it('ignores an edited app_mention', () => {
    expect(normaliseSlackEvent(envelope({ type: 'app_mention', channel: 'C1', user: 'U1', text: 'x', ts: '1.2', edited: { ts: '1.3' } }), BOT).kind).toBe('ignored');
  });

  it('turns Slack markup back into text for the agent', () => {
    expect(slackTextToPlain('<@UBOT1> ask <@U2> in <#C9|general> about <https://x.com|this> &amp; <https://y.com> &lt;3 <!here>', 'UBOT1')).toBe(
      'ask @U2 in #general about this (https://x.com) & https://y.com <3 @here',
    );
  });

  it("keeps the message's spacing when it removes the bot's mention: code indentation, aligned columns", () => {
    const code = '```\ndef f():\n    if x:\n        return  1\n```';
    expect(normalised(message({ text: `<@UBOT1> why does this fail?\n${code}` })).text).toBe(`why does this fail?\n${code}`);
    expect(slackTextToPlain('name    size\nа.txt   10  <@UBOT1>', 'UBOT1')).toBe('name    size\nа.txt   10');
    expect(slackTextToPlain('ask <@UBOT1> <@UBOT1|bot> now', 'UBOT1')).toBe('ask now');
  });

  it('never throws and never yields malformed IDs, whatever arrives', () => {
    const anyValue = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(undefined), fc.boolean(), fc.object(), fc.array(fc.string()));
    const eventish = fc.record(
      {
        type: fc.oneof(fc.constantFrom('message', 'app_mention', 'reaction_added'), anyValue),
        subtype: fc.oneof(fc.constantFrom('file_share', 'bot_message', 'message_changed'), anyValue),
        channel: fc.oneof(fc.constantFrom('C1', 'D1', 'C1:x', '../..', 'C'.repeat(10_000)), anyValue),
        channel_type: fc.oneof(fc.constantFrom('im', 'channel', 'mpim'), anyValue),
        user: fc.oneof(fc.constantFrom('U1', 'UBOT1', 'U\u202E1'), anyValue),
        bot_id: anyValue,
        text: fc.oneof(fc.string({ maxLength: 10_000 }), fc.string({ unit: 'grapheme' }), anyValue),
        ts: fc.oneof(fc.constantFrom('1700000000.000100', '1.2', 'abc', ''), anyValue),
        thread_ts: anyValue,
        files: anyValue,
        user_profile: anyValue,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(anyValue, fc.record({ team_id: anyValue, event: fc.oneof(eventish, anyValue) }, { requiredKeys: [] })), (body) => {
        const r = normaliseSlackEvent(body, BOT);
        if (r.kind === 'message') {
          expect(r.message.conversation.channelId).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
          expect(r.message.messageId).toMatch(/^[A-Za-z0-9_-]{1,64}:\d+\.\d+$/);
          expect(typeof r.message.text).toBe('string');
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('normaliseSlackEvent: rich text without text', () => {
  const identity = { userId: 'UBOT00001', botId: 'BBOT00001', teamId: 'T0EMU' };
  const body = (blocks: unknown) => ({ team_id: 'T0EMU', event: { type: 'app_mention', channel: 'C0GENERAL', user: 'UUSER0001', ts: '1700000000.000100', text: '', blocks } });

  it('reads the question from its rich text blocks', () => {
    const r = normaliseSlackEvent(body([{ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'user', user_id: 'UBOT00001' }, { type: 'text', text: ' hi <there> ' }, { type: 'broadcast', range: 'here' }] }] }]), identity);
    expect(r.kind === 'message' && r.message.text).toBe('hi <there> @here');
    expect(r.kind === 'message' && r.message.mentionsBot).toBe(true);
  });

  it('never throws on hostile blocks (deep nesting, odd indents, junk)', () => {
    let deep: Record<string, unknown> = { type: 'rich_text_section', elements: [{ type: 'text', text: 'bottom' }] };
    for (let i = 0; i < 5_000; i++) deep = { type: 'rich_text_list', indent: i % 2 ? -5 : 1e9, elements: [deep] };
    for (const blocks of [[{ type: 'rich_text', elements: [deep] }], 'x', [null, 1, { type: 'rich_text', elements: 'no' }], [{ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'link', url: 5 }] }] }]]) {
      expect(() => normaliseSlackEvent(body(blocks), identity)).not.toThrow();
    }
  });
});
