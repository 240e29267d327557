import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFeedbackValue } from '../../src/feedback/index.js';
import { botMention, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * Feedback buttons on replies the worker makes: a message goes through the real ingress (HTTP
 * events or Socket Mode), the queue and the worker to the agent emulator, and the reply's last
 * message carries Slack's `feedback_buttons` (in a `context_actions` block), only the last one
 * when the reply is split. No test here calls the reply port itself.
 */
const PART = (n: number) => `Part ${n}. ${'All work and no play. '.repeat(140).trim()}`;
const LONG_ANSWER = [1, 2, 3].map(PART).join('\n\n');

type Block = Record<string, any>;
const blocksOf = (c: { params: Record<string, string | undefined> }): Block[] | undefined => (c.params.blocks ? (JSON.parse(c.params.blocks) as Block[]) : undefined);
const feedbackOf = (blocks: Block[] | undefined) =>
  blocks?.filter((b) => b.type === 'context_actions').flatMap((b) => (b.elements as Block[]).filter((e) => e.type === 'feedback_buttons')) ?? [];

describe.each(['http', 'socket'] as const)('feedback buttons on worker replies over %s', (mode) => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode, agent: { reply: (_id, message) => (message.includes('long answer') ? LONG_ANSWER : `answer to: ${message}`) } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('puts feedback_buttons in a context_actions block on a one-message reply, and a click is thanked', async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} short question ${mode}` });
    const [reply] = await h.slack.waitForCalls('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === root.ts, 1, 30_000);
    expect(reply!.params.text).toContain(`answer to: short question ${mode}`);
    const blocks = blocksOf(reply!)!;
    expect(blocks.at(-1)!.type).toBe('context_actions');
    const [buttons, ...more] = feedbackOf(blocks);
    expect(more).toEqual([]);
    expect(buttons!.positive_button.text.type).toBe('plain_text');
    const positive = decodeFeedbackValue(buttons!.positive_button.value);
    const negative = decodeFeedbackValue(buttons!.negative_button.value);
    // The instance that answered and the message ID the agent service returned for this reply.
    expect(positive).toMatchObject({ rating: 'positive', instanceId: 'demo-helper' });
    expect(positive?.agentMessageId).toMatch(/^msg_\d+$/);
    expect(negative).toEqual({ ...positive, rating: 'negative' });

    const click = h.slack.feedbackClick({
      user: W.user,
      channel: W.general,
      messageTs: reply!.response.ts as string,
      threadTs: root.ts,
      actionId: buttons!.action_id,
      value: buttons!.negative_button.value,
    });
    expect((await h.to.interaction(click)).acked).toBe(true);
    const thanks = await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === W.user && c.params.thread_ts === root.ts, 30_000);
    expect(thanks.params.text).toBe('Thanks for the feedback!');
    const metrics = await (await fetch(`http://127.0.0.1:${h.bridge.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/agent_bridge_feedback_total\{agent_instance="demo-helper",rating="negative"\} 1/);
  });

  it('puts them on the last message only when the reply is split into several', async () => {
    const root = await say(h, { channel: W.general, text: `${botMention(h)} a long answer please ${mode}` });
    const posts = await until(() => {
      const p = postsIn(h, W.general, root.ts);
      return p.length >= 3 && p;
    }, 'the three messages of the reply', 30_000);
    expect(posts).toHaveLength(3);
    expect(posts.map((p) => /^Part (\d)\./.exec(p.params.text ?? '')?.[1])).toEqual(['1', '2', '3']);
    expect(feedbackOf(blocksOf(posts[0]!))).toEqual([]);
    expect(feedbackOf(blocksOf(posts[1]!))).toEqual([]);
    const last = feedbackOf(blocksOf(posts[2]!));
    expect(last).toHaveLength(1);
    expect(decodeFeedbackValue(last[0]!.positive_button.value)).toMatchObject({ rating: 'positive', instanceId: 'demo-helper' });
  });
});
