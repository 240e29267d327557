import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * What a Slack message shows is not always its `text`: an app's message often has an empty
 * `text` and everything in blocks or legacy attachments, and a forwarded message keeps the
 * forwarded words in an attachment (`is_share`). The agent gets what the user sees, through
 * "Ask the agent", a mention, and a thread's earlier messages.
 */
let h: SlackHarness;
beforeAll(async () => {
  h = await startSlackBridge({ mode: 'http' });
});
afterAll(async () => {
  await h?.close();
});

const messages = () => chatCalls(h).map((c) => String((c.json as { message?: string }).message));
const agentGot = (text: string) => messages().find((m) => m.includes(text));
const OTHER_APP = 'BOTHERAPP1';

/** Another app posts in #general: empty text, its content in blocks and/or attachments. */
function appPost(o: { blocks?: Record<string, unknown>[]; attachments?: Record<string, unknown>[]; threadTs?: string; channel?: string }) {
  return h.slack.userMessage({ channel: o.channel ?? W.general, user: 'UNUSED', botId: OTHER_APP, subtype: 'bot_message', text: '', ...o });
}
const ask = (ts: string) => h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: ts, callbackId: 'ask_agent' }));

describe('"Ask the agent" on an app\'s message with no text (Slack)', () => {
  it('sends what its blocks show: section text and fields, header, context', async () => {
    const m = appPost({
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: 'Deploy failed: api-gateway' } },
        { type: 'section', text: { type: 'mrkdwn', text: '*Stage:* canary <https://ci.example/run/9|run 9>' }, fields: [{ type: 'mrkdwn', text: '*Region:* eu-west-1' }] },
        { type: 'context', elements: [{ type: 'image', image_url: 'https://x/i.png', alt_text: 'logo' }, { type: 'plain_text', text: 'exit code 137 < OOM' }] },
      ],
    });
    expect((await ask(m.ts)).acked).toBe(true);
    await until(() => agentGot('Deploy failed: api-gateway'), 'the blocks sent to the agent');
    const got = agentGot('Deploy failed')!;
    expect(got).toContain('*Stage:* canary run 9 (https://ci.example/run/9)');
    expect(got).toContain('*Region:* eu-west-1');
    expect(got).toContain('exit code 137 < OOM');
    await until(() => postsIn(h, W.general, m.ts).length > 0, 'the answer in its thread');
    // Not refused as empty.
    expect(postsIn(h, W.general, m.ts).some((c) => /only text|empty|nothing to/i.test(c.params.text ?? ''))).toBe(false);
  });

  it('sends what its legacy attachments show: pretext, title, text, fields', async () => {
    const m = appPost({
      attachments: [{ fallback: 'Alert: disk 95%', pretext: 'New alert', title: 'Disk almost full', text: 'db-3 /var at 95%', fields: [{ title: 'Host', value: 'db-3', short: true }] }],
    });
    await ask(m.ts);
    await until(() => agentGot('Disk almost full'), 'the attachment sent to the agent');
    const got = agentGot('Disk almost full')!;
    expect(got).toContain('New alert');
    expect(got).toContain('db-3 /var at 95%');
    expect(got).toContain('Host: db-3');
  });
});

describe('"Ask the agent" on a message with nothing to read (Slack)', () => {
  it('tells the asker alone, calls no agent, posts nothing in the thread', async () => {
    const m = appPost({ blocks: [{ type: 'image', image_url: 'https://x/chart.png', alt_text: 'chart' }, { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open' }, action_id: 'a' }] }] });
    const before = chatCalls(h).length;
    const shortcut = h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: m.ts, callbackId: 'ask_agent' });
    expect((await h.to.interaction(shortcut)).acked).toBe(true);
    const id = String(shortcut.response_url).split('/').at(-1);
    const said = await h.slack.waitForCall('response_url', (c) => c.response.id === id, 15_000);
    expect(said.rawBody).toContain('no text or text file I can send to the agent');
    expect(said.rawBody).toContain('ephemeral');
    await new Promise((r) => setTimeout(r, 300));
    expect(chatCalls(h).length).toBe(before);
    expect(postsIn(h, W.general, m.ts)).toEqual([]);
  });
});

describe('a forwarded message (Slack)', () => {
  it('is sent with the mention, marked as forwarded', async () => {
    const forward = {
      is_share: true,
      is_msg_unfurl: true,
      author_id: W.admin,
      author_name: 'Ada Admin',
      channel_id: 'C0OTHER01',
      ts: '1700000000.000100',
      text: 'The build cache is corrupted on runner 4',
      fallback: '[November 1st, 2023 10:00 AM] Ada Admin: The build cache is corrupted on runner 4',
      from_url: 'https://emulated.slack.com/archives/C0OTHER01/p1700000000000100',
    };
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} is this still a problem?`, attachments: [forward] });
    await h.to.event(m.mention);
    await h.to.event(m.message);
    await until(() => agentGot('is this still a problem?'), 'the mention sent to the agent');
    const got = agentGot('is this still a problem?')!;
    expect(got).toContain('Forwarded message from Ada Admin:');
    expect(got).toContain('> The build cache is corrupted on runner 4');
  });

  it('is read from its message_blocks when the share has no text', async () => {
    const forward = {
      is_share: true,
      author_id: W.owner,
      message_blocks: [{ team: 'T1', channel: 'C0OTHER01', ts: '1700000000.000200', message: { blocks: [{ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'Quarterly numbers are in the sheet' }] }] }] } }],
    };
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} summarise please`, attachments: [forward] });
    await h.to.event(m.mention);
    await h.to.event(m.message);
    await until(() => agentGot('summarise please'), 'the mention sent to the agent');
    expect(agentGot('summarise please')).toContain('> Quarterly numbers are in the sheet');
    // No author_name on the share: named from its author_id.
    expect(agentGot('summarise please')).toContain('Forwarded message from @Olga Owner:');
  });
});

describe('a message forwarded to the bot in a DM, with no comment (Slack)', () => {
  it('is sent as the forwarded message, not refused as empty', async () => {
    const forward = { is_share: true, author_name: 'Ada Admin', text: 'Can someone check the SLA for ACME?' };
    const m = h.slack.userMessage({ channel: W.dm, user: W.user, text: '', attachments: [forward] });
    await h.to.event(m.message);
    await until(() => agentGot('Can someone check the SLA for ACME?'), 'the forward sent to the agent');
    expect(agentGot('Can someone check the SLA for ACME?')).toContain('Forwarded message from Ada Admin:\n> Can someone check the SLA for ACME?');
  });
});

describe('a forwarded message with a file (Slack)', () => {
  it("reads the forwarded message's file, as a file of the message", async () => {
    const file = h.slack.files.add({ name: 'crash.log', mimetype: 'text/plain', content: 'panic: nil map write' });
    const forward = { is_share: true, author_name: 'Ada Admin', text: 'see the log', files: [file] };
    const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} why did it crash?`, attachments: [forward] });
    await h.to.event(m.mention);
    await h.to.event(m.message);
    await until(() => agentGot('why did it crash?'), 'the mention sent to the agent');
    const got = agentGot('why did it crash?')!;
    expect(got).toContain('> see the log');
    expect(got).toContain('crash.log');
    expect(got).toContain('panic: nil map write');
  });
});

describe('thread context (Slack)', () => {
  it("reads an app's message in the thread by what it shows", async () => {
    const sent = await h.to.command({ text: 'set context thread', user: W.admin, channel: W.general });
    await h.slack.waitForCall('response_url', (c) => c.response.id === sent.responseUrlId, 30_000);
    const root = await say(h, { channel: W.general, user: W.user, text: `${botMention(h)} watch this thread` });
    await until(() => postsIn(h, W.general, root.ts).length > 0, 'the first answer');
    const app = appPost({ threadTs: root.ts, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'Incident INC-42 opened by PagerDuty' } }] });
    await h.to.event(app.message);
    // A file shared in the thread without a word: named in the context (only the question's own files are read).
    const shared = h.slack.userMessage({ channel: W.general, user: W.admin, text: '', threadTs: root.ts, subtype: 'file_share', files: [h.slack.files.add({ name: 'heap.txt', mimetype: 'text/plain', content: 'x' })] });
    await h.to.event(shared.message);
    await say(h, { channel: W.general, user: W.user, text: 'what is the incident number?', threadTs: root.ts });
    await until(() => agentGot('what is the incident number?'), 'the follow-up sent to the agent');
    expect(agentGot('what is the incident number?')).toContain('Incident INC-42 opened by PagerDuty');
    expect(agentGot('what is the incident number?')).toContain('Ada Admin: [shared a file: heap.txt]');
  });
});
