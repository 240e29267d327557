import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../src/audit/audit-log.js';
import { createGoneChannels } from '../../adapters/slack/gone-channels.js';
import { botMention, chatCalls, logLines, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';
import { NamedHolds } from '../support/held-calls.js';
import { keepWorkerBusy } from './busy-worker.js';

const ARCHIVED = 'C0ARCHIVE';
const KICKED = 'C0KICKED1';
const DELETED = 'C0DELETED';
const BACKLOG = 'C0BACKLOG';

/**
 * The place a reply should go goes away while its message waits or the agent works: the channel
 * archived, deleted, or the bot removed from it. Slack says so twice: with an event at once, and
 * with a refusal of the post. Each agent call is billed; none may be made for an answer that
 * cannot be posted once the bridge knows, none twice, and the end is told once in the log.
 */
describe.each(['http', 'socket'] as const)("Slack (%s): the reply's channel goes away while messages wait", (mode) => {
  let h: SlackHarness;
  const holds = new NamedHolds();
  beforeAll(async () => {
    h = await startSlackBridge({
      mode,
      // Long enough that the whole backlog below falls within one check.
      replyPort: { goneRecheckMs: 60_000 },
      agent: {
        // "hold <name>" waits for the test to release it.
        reply: holds.reply,
      },
      // One message at a time: a message of another channel keeps the worker busy while the test
      // changes Slack under the messages queued behind it.
      env: { WORKER_CONCURRENCY: '1', BINDINGS: [W.general, ARCHIVED, KICKED, DELETED, BACKLOG].map((c) => `slack:${c}=demo-helper`).join(',') },
    });
  });
  afterAll(async () => h?.close());

  const calledWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message?.includes(text));
  const gaveUp = (ts: string) => logLines(h, /gave up on a message/).filter((l) => String(l.messageId).endsWith(ts));
  const triedIn = (channel: string, method: string, after = 0) => h.slack.callsOf(method, (c) => c.params.channel === channel && c.at >= after);
  const warningsAbout = (channel: string) => h.logs.lines.filter((l) => l.includes(channel) && /"level":(40|50)/.test(l));
  /** Delivers Slack's events; their ack waits for the mark, so it is in Redis when this returns. */
  const send = async (events: Array<Record<string, unknown>>) => {
    for (const e of events) await h.to.event(e);
  };
  const marked = (channel: string) => createGoneChannels(h.bridge.redis, h.bridge.config).get(channel);
  /** Keeps the worker busy with a message in #general until the returned function is called. */
  const busy = (name: string) => keepWorkerBusy(h, holds, name);

  it('archived while its message waits: the agent is never asked, nothing is tried there, one give-up line; unarchived it answers again', async () => {
    const done = await busy('a');
    const since = Date.now();
    const queued = await say(h, { channel: ARCHIVED, text: `${botMention(h)} archived one` });
    await send(h.slack.archiveChannel(ARCHIVED, W.admin));
    expect(await marked(ARCHIVED)).toBe('is_archived');
    await done();
    await until(() => gaveUp(queued.ts).length === 1, 'given up');
    expect(calledWith('archived one')).toEqual([]);
    // No reply, no notice, no :eyes: or :warning: in a channel Slack refuses them in.
    expect(triedIn(ARCHIVED, 'chat.postMessage')).toEqual([]);
    expect(triedIn(ARCHIVED, 'reactions.add', since)).toEqual([]);
    const warnings = warningsAbout(ARCHIVED);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/archived/);
    expect(h.logs.lines.join('\n')).not.toContain(h.slack.identity.botToken);

    await send(h.slack.unarchiveChannel(ARCHIVED, W.admin));
    expect(await marked(ARCHIVED)).toBeUndefined();
    const back = await say(h, { channel: ARCHIVED, text: `${botMention(h)} archived two` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === back.ts, 15_000);
    expect(calledWith('archived two')).toHaveLength(1);
    // Its working reaction too: the unarchive lifted the refusal the worker remembered.
    await h.slack.waitForCall('reactions.add', (c) => c.response.ok === true && c.params.timestamp === back.ts);
  }, 30_000);

  it('the bot removed while the agent works: that answer is refused once (no retry, no second call), the message queued behind it is not sent', async () => {
    // Someone else leaving is none of the bot's business.
    await send([{ type: 'member_left_channel', user: W.user, channel: KICKED, channel_type: 'C', team: h.slack.identity.teamId, event_ts: '1.000001' }]);
    expect(await marked(KICKED)).toBeUndefined();
    const first = await say(h, { channel: KICKED, text: `${botMention(h)} hold kicked` });
    await until(() => holds.has('kicked'), 'agent working');
    const next = await say(h, { channel: KICKED, threadTs: first.ts, text: `${botMention(h)} kicked next` });
    await send(h.slack.removeBot(KICKED, W.admin));
    holds.release('kicked');
    await until(() => gaveUp(first.ts).length === 1 && gaveUp(next.ts).length === 1, 'both given up');
    expect(calledWith('hold kicked')).toHaveLength(1);
    expect(calledWith('kicked next')).toEqual([]);
    // The one refused post is the billed answer's; no notice after it, no retry of it.
    expect(triedIn(KICKED, 'chat.postMessage').map((c) => c.response.error)).toEqual(['not_in_channel']);
    // Told once each: the refused reply and its give-up, the next one's give-up; no notice
    // tried after a refusal (and no line saying it could not be posted).
    expect(warningsAbout(KICKED).map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual([expect.stringMatching(/^Slack refused the reply/), 'gave up on a message', 'gave up on a message']);
    // Slack's two events for one removal are one line.
    expect(logLines(h, /removed from the channel/).filter((l) => l.channel === KICKED)).toHaveLength(1);

    await send(h.slack.inviteBot(KICKED, W.admin));
    expect(await marked(KICKED)).toBeUndefined();
    const back = await say(h, { channel: KICKED, text: `${botMention(h)} kicked again` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === back.ts, 15_000);
  }, 30_000);

  it('a backlog in an archived channel: Slack is asked about it once, and a check it does not answer sends nothing to the agent', async () => {
    const done = await busy('b');
    const queued: Array<{ ts: string }> = [];
    for (let i = 0; i < 4; i++) queued.push(await say(h, { channel: BACKLOG, text: `${botMention(h)} backlog ${i}` }));
    await send(h.slack.archiveChannel(BACKLOG, W.admin));
    // Slack's limit on conversations.info (Tier 3) met on the first check.
    h.slack.fail('conversations.info', { error: 'ratelimited', retryAfterSeconds: 30 });
    await done();
    await until(() => queued.every((m) => gaveUp(m.ts).length === 1), 'all given up');
    expect(calledWith('backlog')).toEqual([]);
    expect(triedIn(BACKLOG, 'chat.postMessage')).toEqual([]);
    // The rate-limited check, then one that answered; not one per message.
    expect(triedIn(BACKLOG, 'conversations.info').map((c) => c.status)).toEqual([429, 200]);
  }, 30_000);

  it('deleted while its message waits: not sent to the agent, and the binding is removed and audited', async () => {
    expect(await h.bridge.bindings.get('slack', DELETED)).toBeDefined();
    const done = await busy('d');
    const queued = await say(h, { channel: DELETED, text: `${botMention(h)} deleted one` });
    await send(h.slack.deleteChannel(DELETED, W.admin));
    await done();
    await until(() => gaveUp(queued.ts).length === 1, 'given up');
    expect(calledWith('deleted one')).toEqual([]);
    expect(triedIn(DELETED, 'chat.postMessage')).toEqual([]);
    expect(await h.bridge.bindings.get('slack', DELETED)).toBeUndefined();
    const audit = await createAuditLog({ redis: h.bridge.redis, prefix: `${h.prefix}:chat` }).recent(10, { platform: 'slack', workspaceId: h.slack.identity.teamId });
    expect(audit).toContainEqual(expect.objectContaining({ action: 'unbind', actor: 'slack', channelId: DELETED, detail: expect.stringMatching(/deleted/) }));
    // Another channel never waited on any of it.
    const elsewhere = await say(h, { channel: W.general, text: `${botMention(h)} elsewhere` });
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === elsewhere.ts, 15_000);
  }, 30_000);
});
