import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeConversationId } from '../../src/core/conversation.js';
import { queueKeys } from '../../src/queue/keys.js';
import { bullPrefix } from '../../src/redis.js';
import { chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';
import { NamedHolds } from '../support/held-calls.js';
import { keepWorkerBusy } from './busy-worker.js';

/**
 * "Ask the agent" on a message that is then deleted while the question waits (it held a secret,
 * say): the agent is not asked it, and nothing is posted for it, as for a deleted question.
 * The ask's own ID is not the message's, so the deletion looks its asks up.
 */
describe('Slack: "Ask the agent" about a message deleted while the ask waits', () => {
  let h: SlackHarness;
  const holds = new NamedHolds();
  beforeAll(async () => {
    h = await startSlackBridge({
      mode: 'http',
      agent: {
        // "hold <name>" waits for the test to release it.
        reply: holds.reply,
      },
      // One message at a time: a held one keeps the ask waiting in line.
      env: { WORKER_CONCURRENCY: '1' },
    });
  });
  afterAll(async () => h?.close());

  const calledWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message?.includes(text));
  /** Keeps the worker busy until the returned function is called; it resolves once that answer is out. */
  const busy = (name: string) => keepWorkerBusy(h, holds, name);
  /** Asks about a message, deletes it, lets the worker go on; resolves once a later message is answered. */
  const askThenDelete = async (channel: string, name: string, text: string, author: string = W.admin) => {
    const done = await busy(name);
    const target = await say(h, { channel, user: author, text });
    await h.to.interaction(h.slack.messageShortcut({ user: W.user, channel, messageTs: target.ts, callbackId: 'ask_agent' }));
    const askId = `${channel}:${target.ts}:ask:${W.user}`;
    // Queued: its record is in its conversation (the asked message's thread).
    const records = queueKeys(`${bullPrefix(h.bridge.config)}:chat`).messages(
      encodeConversationId({ platform: 'slack', workspaceId: h.slack.identity.teamId, channelId: channel, threadId: target.ts }),
    );
    await until(async () => (await h.bridge.redis.hexists(records, askId)) === 1, 'ask queued');
    await h.to.event(h.slack.deleteMessage(channel, target.ts));
    await done();
    // The worker reaches the ask: it either calls the agent with it or passes it by as withdrawn.
    const passedBy = () => logLines(h, /deleted before it was answered: not calling the agent/).some((l) => l.messageId === askId);
    await until(() => calledWith(text).length > 0 || passedBy(), 'the ask taken');
    return { target, askId };
  };

  it('in a channel: the ask is withdrawn, and the asker is told nothing more', async () => {
    const { target, askId } = await askThenDelete(W.general, 'first', 'the deploy key is hunter2');
    expect(calledWith('hunter2')).toEqual([]);
    expect(postsIn(h, W.general, target.ts)).toEqual([]);
    expect(h.slack.callsOf('chat.postEphemeral')).toEqual([]);
    expect(logLines(h, /deleted before it was answered/).map((l) => l.messageId)).toContain(askId);
  });

  it("in a DM (its top level, where the ask's conversation is the message's own thread)", async () => {
    // The DM's own user asks about a message of theirs (sent to the bot as well: both withdrawn).
    const { target, askId } = await askThenDelete(W.dm, 'second', 'my password is swordfish', W.user);
    expect(calledWith('swordfish')).toEqual([]);
    expect(h.slack.posted((c) => c.params.channel === W.dm && String(c.params.text).includes('swordfish'))).toEqual([]);
    expect(postsIn(h, W.dm, target.ts)).toEqual([]);
    expect(logLines(h, /deleted before it was answered/).map((l) => l.messageId)).toContain(askId);
  });
});
