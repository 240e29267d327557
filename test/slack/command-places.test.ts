import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { startSlackBridge, W, type SlackHarness } from './harness.js';

/** Runs `/agent <text>` (sent as Slack sends it: `&`, `<`, `>` escaped) and returns the answer's blocks. */
async function run(h: SlackHarness, text: string, channel: string, user: string = W.admin): Promise<string> {
  const ack = await h.to.command({ text, user, channel });
  expect(ack.acked).toBe(true);
  const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
  expect(call.params.response_type).toBe('ephemeral');
  return call.params.blocks ?? '';
}

describe('/agent as Slack delivers it, in odd places', () => {
  let h: SlackHarness;
  openForAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
    h.slack.addChannel({ id: 'G0HIDDEN1', member: false, private: true });
    h.slack.addChannel({ id: 'C0NOTIN01', member: false });
    h.slack.addChannel({ id: 'C0MEMBER1' });
    return h;
  });

  it('takes `&`, `<` and `>` as typed: a prompt titled "Q&A" is stored and suggested as Q&A', async () => {
    await run(h, 'bind demo-helper', 'C0MEMBER1');
    const answer = await run(h, 'set prompts Q&A | Pros & cons <draft>', 'C0MEMBER1');
    // Escaped once for Slack, as any text the bot sends: shown as typed.
    expect(answer).toContain('Q&amp;A');
    expect(answer).not.toContain('&amp;amp;');
    const started = h.slack.assistantThreadStarted({ user: W.user, dm: 'D0PROMPT1', contextChannel: 'C0MEMBER1' });
    await h.to.event(started.event);
    const prompts = await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs);
    expect(JSON.parse(prompts.params.prompts!).map((p: { title: string }) => p.title)).toEqual(['Q&A', 'Pros & cons <draft>']);
  });

  it('binds a private channel the bot is not in, and tells the admin to invite it', async () => {
    const answer = await run(h, 'bind demo-helper', 'G0HIDDEN1');
    expect(answer).toContain('demo-helper');
    expect(answer).toMatch(/not a member of this channel[\s\S]*\/invite/);
    expect(await h.bridge.bindings.get('slack', 'G0HIDDEN1')).toMatchObject({ instanceId: 'demo-helper' });
    expect(await run(h, 'bind demo-helper all', 'C0NOTIN01')).toMatch(/not a member of this channel/);
    expect(await run(h, 'bind demo-helper', 'C0MEMBER1')).not.toMatch(/not a member/);
  });

  it('reads uppercase subcommands, extra spaces and a quoted ID', async () => {
    const answer = await run(h, '  BIND   `demo-poet`   ALL  ', 'C0MEMBER1');
    expect(answer).toContain('demo-poet');
    expect(await h.bridge.bindings.get('slack', 'C0MEMBER1')).toMatchObject({ instanceId: 'demo-poet', mode: 'all' });
  });
});
