import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * What Slack refuses in a reply's post besides its text. The answer is billed: a refusal of an
 * extra (the feedback buttons' blocks, the metadata) must not lose it nor ask the user to try
 * again (which bills the question again, to fail the same way).
 */
describe('Slack refusals of a reply', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http', agent: { reply: (_id, message) => `echo: ${message}` } });
  });
  afterAll(async () => h?.close());

  const calledWith = (text: string) => chatCalls(h).filter((c) => (c.json as { message?: string }).message === text);

  for (const code of ['invalid_blocks', 'msg_blocks_too_long']) {
    it(`${code}: the answer is posted without the feedback buttons, once, and the agent is called once`, async () => {
      h.slack.fail('chat.postMessage', { error: code });
      const m = await say(h, { channel: W.general, text: `${botMention(h)} blocks refused ${code}` });
      const ok = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 15_000);
      const attempts = h.slack.callsOf('chat.postMessage', (c) => c.params.thread_ts === m.ts);
      expect(attempts.map((c) => String(c.response.error ?? 'ok'))).toEqual([code, 'ok']);
      // The refused post carried the buttons; the one that went out carries the same text without them.
      expect(attempts[0]!.params.blocks).toContain('feedback_buttons');
      expect(ok.params.blocks).toBeUndefined();
      expect(ok.params.text).toBe(`echo: blocks refused ${code}`);
      expect(ok.params.metadata).toContain('agent_bridge_reply');
      await until(() => !h.slack.reactionsOn(W.general, m.ts).includes('eyes'), 'working reaction taken down');
      const posts = postsIn(h, W.general, m.ts);
      expect(posts).toHaveLength(1);
      expect(posts.some((c) => /could not be posted/.test(c.params.text ?? ''))).toBe(false);
      expect(h.slack.reactionsOn(W.general, m.ts)).not.toContain('warning');
      expect(calledWith(`blocks refused ${code}`)).toHaveLength(1);
      const line = logLines(h, /Slack refused the reply's blocks/).find((l) => l.code === code);
      expect(line).toBeDefined();
    });
  }

  it('invalid_metadata_format: the answer is posted without its metadata, once', async () => {
    h.slack.fail('chat.postMessage', { error: 'invalid_metadata_format' });
    const m = await say(h, { channel: W.general, text: `${botMention(h)} metadata refused` });
    const ok = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts, 15_000);
    expect(ok.params.metadata).toBeUndefined();
    expect(ok.params.text).toBe('echo: metadata refused');
    expect(ok.params.blocks).toContain('feedback_buttons');
    await until(() => !h.slack.reactionsOn(W.general, m.ts).includes('eyes'), 'working reaction taken down');
    expect(postsIn(h, W.general, m.ts)).toHaveLength(1);
    expect(calledWith('metadata refused')).toHaveLength(1);
  });
});
