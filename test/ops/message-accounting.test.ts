import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askMessageId } from '../../adapters/discord/commands/ask-agent.js';
import { encodeConversationId } from '../../src/core/conversation.js';
import { queueKeys } from '../../src/queue/keys.js';
import { bullPrefix } from '../../src/redis.js';
import type { Bridge } from '../../src/app.js';
import { HeldCalls, NamedHolds } from '../support/held-calls.js';
import { keepWorkerBusy } from '../slack/busy-worker.js';
import { botMention, logLines, say, startSlackBridge, until, W, type SlackHarness } from '../slack/harness.js';
import { mention, startDiscordBridge, type DiscordHarness } from '../discord/harness.js';
import { heldQuestions } from '../discord/held-questions.js';

/**
 * An operator alerts on "messages taken in but never finished": once the bridge is idle, every
 * message the ingress counted as `queued` must have ended in exactly one outcome of
 * `agent_bridge_messages_total` (replied, gave_up, withdrawn, lost), whatever path ended it, and
 * each end is one log line with its IDs. Before: a question deleted or edited away while it
 * waited counted as `gave_up` (the user got no error message), the messages an uninstall (or
 * the bot leaving a server) forgot were counted nowhere, nor was a message whose record was gone.
 */

type Figures = { queued: number; outcomes: Record<string, number> };

/** The platform's ingress `queued` and its outcomes, read from /metrics over HTTP. */
async function figures(bridge: Bridge, platform: string): Promise<Figures> {
  const text = await (await fetch(`http://127.0.0.1:${bridge.httpPort}/metrics`)).text();
  const result: Figures = { queued: 0, outcomes: {} };
  for (const line of text.split('\n')) {
    const m = /^(agent_bridge_ingress_messages_total|agent_bridge_messages_total)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.platform !== platform) continue;
    if (m[1] === 'agent_bridge_ingress_messages_total' && labels.result === 'queued') result.queued += Number(m[3]);
    if (m[1] === 'agent_bridge_messages_total') result.outcomes[labels.outcome!] = (result.outcomes[labels.outcome!] ?? 0) + Number(m[3]);
  }
  return result;
}

/** Waits until nothing is queued, running or waiting out a retry. */
async function idle(bridge: Bridge): Promise<void> {
  await until(async () => {
    const c = await bridge.queue.counts();
    return c.waiting + c.active + c.delayed === 0;
  }, 'the queue idle', 20_000);
}

const sum = (outcomes: Record<string, number>) => Object.values(outcomes).reduce((a, b) => a + b, 0);

/** The messages each end line names (`ended`: its outcome), by outcome: one line per end. */
function endedInLogs(lines: Array<Record<string, unknown>>, platform: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const l of lines) {
    if (typeof l.ended !== 'string' || l.platform !== platform) continue;
    expect(l.reason ?? l.ended === 'replied', JSON.stringify(l)).toBeTruthy();
    const n = Array.isArray(l.messageIds) ? l.messageIds.length : 1;
    counts[l.ended] = (counts[l.ended] ?? 0) + n;
  }
  return counts;
}

describe('Slack: every queued message ends in one counted outcome', () => {
  let h: SlackHarness;
  const holds = new NamedHolds();
  const ARCHIVED = 'C0ARCHIVE';
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      agent: {
        // "FAIL" makes the agent fail (a 500) every time; "hold <name>" waits for the test.
        reply: async (id, message) => {
          if (message.includes('FAIL')) throw new Error('the agent failed');
          return holds.reply(id, message);
        },
      },
      // One message at a time: the held one keeps the others waiting in line. One retry, soon.
      env: {
        WORKER_CONCURRENCY: '1',
        JOB_ATTEMPTS: '2',
        RETRY_BASE_DELAY_MS: '50',
        LOG_LEVEL: 'info',
        BINDINGS: `slack:${W.general}=demo-helper,slack:dm=demo-helper,slack:${ARCHIVED}=demo-helper`,
      },
    });
  }, 30_000);
  afterAll(async () => {
    holds.releaseAll();
    await h?.close();
  });

  const recordsOf = (channel: string, threadTs?: string) =>
    queueKeys(`${bullPrefix(h.bridge.config)}:chat`).messages(
      encodeConversationId({ platform: 'slack', workspaceId: h.slack.identity.teamId, channelId: channel, ...(threadTs ? { threadId: threadTs } : {}) }),
    );
  const stored = (key: string, id: string) => until(async () => (await h.bridge.redis.hexists(key, id)) === 1, `${id} queued`);

  it('replied, withdrawn (deleted, deleted before it arrived, edited away, left empty, an ask about a deleted message), gave up (place gone, retries spent), lost: the sum is what was queued', async () => {
    const done = await keepWorkerBusy(h, holds, 'first');
    const mentioned = (text: string, channel: string = W.general) => say(h, { channel, text: `${botMention(h)} ${text}` });

    const plain = await mentioned('a plain question');
    const deleted = await mentioned('deleted while it waits');
    const unmentioned = await mentioned('edited to ask nothing');
    const emptied = await say(h, { channel: W.dm, text: 'left empty soon' });
    const target = await say(h, { channel: W.general, text: 'a message asked about, then deleted' });
    await h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: target.ts, callbackId: 'ask_agent' }));
    const askId = `${W.general}:${target.ts}:ask:${W.user}`;
    const archived = await mentioned('in a channel about to be archived', ARCHIVED);
    const failing = await mentioned('FAIL every time');
    const lost = await mentioned('its record lost');
    for (const [m, channel] of [[plain, W.general], [deleted, W.general], [unmentioned, W.general], [archived, ARCHIVED], [failing, W.general], [lost, W.general]] as const) {
      await stored(recordsOf(channel, m.ts), `${channel}:${m.ts}`);
    }
    await stored(recordsOf(W.dm), `${W.dm}:${emptied.ts}`);
    await stored(recordsOf(W.general, target.ts), askId);

    await h.to.event(h.slack.deleteMessage(W.general, deleted.ts));
    await h.to.event(h.slack.editMessage(W.general, unmentioned.ts, 'never mind, nothing to ask'));
    await h.to.event(h.slack.editMessage(W.dm, emptied.ts, ' '));
    await h.to.event(h.slack.deleteMessage(W.general, target.ts));
    for (const e of h.slack.archiveChannel(ARCHIVED, W.admin)) await h.to.event(e);
    // Its deletion handled before the message itself (Slack keeps no order): stored withdrawn.
    const early = h.slack.userMessage({ channel: W.general, user: W.user, text: `${botMention(h)} deleted before it arrived` });
    await h.to.event(h.slack.deleteMessage(W.general, early.ts));
    await until(() => logLines(h, /deleted before it was stored/).length === 1, 'the early deletion kept');
    await h.to.event(early.mention);
    await h.to.event(early.message);
    await stored(recordsOf(W.general, early.ts), `${W.general}:${early.ts}`);
    // Redis lost it (or it expired): the worker finds its ID and no record.
    await h.bridge.redis.hdel(recordsOf(W.general, lost.ts), `${W.general}:${lost.ts}`);
    await done();

    const last = await mentioned('the last one');
    await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === last.ts, 20_000);
    await idle(h.bridge);

    const f = await figures(h.bridge, 'slack');
    expect(f.queued).toBe(11);
    expect(f.outcomes).toEqual({ replied: 3, gave_up: 2, withdrawn: 5, lost: 1 });
    expect(sum(f.outcomes)).toBe(f.queued);

    // One line per end, with its IDs and a plain reason, never its text.
    expect(endedInLogs(h.logs.matching(/./), 'slack')).toEqual(f.outcomes);
    const ends = (outcome: string) => h.logs.matching(/./).filter((l) => l.ended === outcome);
    const ids = (lines: Array<Record<string, unknown>>) => lines.map((l) => String(l.messageId)).sort();
    expect(ids(ends('withdrawn'))).toEqual([`${W.general}:${deleted.ts}`, `${W.general}:${unmentioned.ts}`, `${W.dm}:${emptied.ts}`, askId, `${W.general}:${early.ts}`].sort());
    const deletedLines = ends('withdrawn').filter((l) => l.reason === 'deleted before it was answered');
    expect(ids(deletedLines)).toEqual([`${W.general}:${deleted.ts}`, askId, `${W.general}:${early.ts}`].sort());
    expect(ends('lost')).toEqual([expect.objectContaining({ platform: 'slack', messageId: `${W.general}:${lost.ts}`, reason: expect.any(String) })]);
    expect(ids(logLines(h, /gave up on a message/))).toEqual([`${ARCHIVED}:${archived.ts}`, `${W.general}:${failing.ts}`].sort());
    expect(logLines(h, /message answered/)).toHaveLength(3);
    for (const text of ['deleted before it arrived', 'edited to ask nothing', 'left empty soon', 'asked about, then deleted', 'deleted while it waits', 'its record lost']) expect(h.logs.text).not.toContain(text);
  }, 60_000);
});

describe('Discord: every queued message ends in one counted outcome', () => {
  const held = new HeldCalls();
  let h: DiscordHarness;
  beforeAll(async () => {
    h = await startDiscordBridge({ emulator: { extraGuilds: 1 }, extraChannels: 1, held });
  }, 30_000);
  afterAll(async () => h?.close());
  const { say, heldQuestion, queued, release } = heldQuestions(() => h, held);
  const w = () => h.discord.world;

  it('replied, withdrawn (deleted, left empty, an ask about a deleted message, the bot removed from the server), gave up: the sum is what was queued', async () => {
    const channel = h.extra[0]!;
    const first = await heldQuestion(channel, 'first in line');
    const deleted = say(channel, 'deleted while it waits');
    const emptied = say(channel, 'left empty soon');
    const kept = say(channel, 'answered in turn');
    const target = h.discord.sendMessage({ author: w().users.bob, channel, content: 'asked about, then deleted' });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel, target });
    await queued([deleted, emptied, kept, target]);
    await h.discord.waitFor(() => ask.original?.content || undefined, 'ask queued');
    const askId = askMessageId(String(target.id), String(w().users.alice.id));
    h.discord.deleteMessage(deleted);
    h.discord.editMessage(emptied, '');
    h.discord.deleteMessage(target);
    // The target is a question too (the channel answers every message): it and its ask go.
    await until(() => h.logs.matching(/deleted before it was answered: the agent will not be asked/).length === 3 && h.logs.matching(/edited \(left empty\)/).length === 1, 'withdrawals seen');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(kept.id)[0], 'the kept one answered');

    // The bot removed from a server: its held question gives up, the one behind it is forgotten.
    const guild = w().extraGuilds[0]!;
    await h.bridge.bindings.set('discord', guild.channel.id, { instanceId: 'demo-helper', mode: 'all', errorPolicy: 'reply', context: 'off', source: 'admin' });
    await heldQuestion(guild.channel, 'before the kick');
    const behind = say(guild.channel, 'queued before the kick');
    await queued([behind]);
    h.discord.removeBotFromGuild(guild.id);
    await until(() => h.logs.text.includes('the bot was removed from a server'), 'removal seen');
    release();

    const last = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} the last one` });
    await h.discord.waitFor(() => h.discord.repliesTo(last.id)[0], 'the last one answered');
    await until(() => h.logs.matching(/gave up on a message/).length === 1, 'the held one given up');
    await idle(h.bridge);

    const f = await figures(h.bridge, 'discord');
    expect(f.outcomes).toEqual({ replied: 3, gave_up: 1, withdrawn: 5 });
    expect(f.queued).toBe(9);
    expect(sum(f.outcomes)).toBe(f.queued);
    expect(h.discord.repliesTo(first.id)).toHaveLength(1);
    expect(endedInLogs(h.logs.matching(/./), 'discord')).toEqual(f.outcomes);
    const passedBy = h.logs.matching(/not calling the agent/).filter((l) => l.ended === 'withdrawn').map((l) => String(l.messageId));
    expect(passedBy.sort()).toEqual([deleted.id, emptied.id, target.id, askId].map(String).sort());
    const forgotten = h.logs.matching(/queued messages withdrawn/);
    expect(forgotten).toEqual([expect.objectContaining({ platform: 'discord', messageIds: [behind.id], reason: expect.stringContaining('removed the app') })]);
    expect(h.logs.text).not.toContain('queued before the kick');
    // The server's line and audit say how many messages went (before: jobs, 0 here: it had none of its own).
    expect(h.logs.matching(/the bot was removed from a server/)[0]).toMatchObject({ guildId: guild.id, dropped: 1 });
  }, 60_000);
});
