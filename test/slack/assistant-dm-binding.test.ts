import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * Issue 14, assistant threads: a thread whose context channel has no binding (or that has no
 * context channel) is answered by the workspace's DM binding (`dm:<team>`); with no binding at
 * all the user reads a plain-words hint in the thread and the agent is not called. Over both
 * transports.
 */
describe.each(['http', 'socket'] as const)('assistant thread without a channel binding, over %s', (mode) => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode, agent: { reply: (id, m) => `${id} says: ${m}` } });
  });
  afterAll(async () => h?.close());

  const team = () => h.slack.identity.teamId;

  /** `/agent <text>` by the admin in a DM with the bot; resolves with the answer's text. */
  async function inDm(text: string) {
    const ack = await h.to.command({ text, user: W.admin, channel: 'D0ADMIN01' });
    const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 20_000);
    return `${call.params.text ?? ''} ${call.params.blocks ?? ''}`;
  }

  /** Starts an assistant thread (with or without a context channel), asks in it, resolves with the bot's post there. */
  async function askAssistant(dm: string, text: string, contextChannel?: string) {
    const started = h.slack.assistantThreadStarted({ user: W.user, dm, ...(contextChannel ? { contextChannel } : {}) });
    await h.to.event(started.event);
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs, 20_000);
    await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text }).message);
    const post = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === dm && c.params.thread_ts === started.threadTs, 20_000);
    return post.params.text ?? '';
  }

  it("is answered by the workspace's DM binding, with or without an unbound context channel", async () => {
    expect(await inDm('bind demo-poet')).toMatch(/bound/i);
    expect((await h.bridge.bindings.get('slack', `dm:${team()}`))?.instanceId).toBe('demo-poet');
    expect(await askAssistant(mode === 'http' ? 'D0ADMH001' : 'D0ADMS001', `no context ${mode}`)).toMatch(new RegExp(`^demo-poet says: [^]*no context ${mode}$`));
    expect(await askAssistant(mode === 'http' ? 'D0ADMH002' : 'D0ADMS002', `unbound context ${mode}`, W.free)).toMatch(
      new RegExp(`^demo-poet says: [^]*unbound context ${mode}$`),
    );
  }, 60_000);

  it("suggests the answering binding's prompts: a bound context channel without prompts gets the defaults, not the DM binding's", async () => {
    expect(await inDm('bind demo-poet')).toMatch(/bound/i);
    expect(await inDm('set prompts Only for DMs')).toMatch(/prompt/i);
    const promptsIn = async (dm: string, contextChannel?: string) => {
      const started = h.slack.assistantThreadStarted({ user: W.user, dm, ...(contextChannel ? { contextChannel } : {}) });
      await h.to.event(started.event);
      const call = await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs, 20_000);
      return (JSON.parse(call.params.prompts!) as Array<{ title: string }>).map((p) => p.title);
    };
    expect(await promptsIn(mode === 'http' ? 'D0ADMH004' : 'D0ADMS004')).toEqual(['Only for DMs']);
    // #general is bound (to demo-helper) and has no prompts of its own.
    const defaults = await promptsIn(mode === 'http' ? 'D0ADMH005' : 'D0ADMS005', W.general);
    expect(defaults).toHaveLength(4);
    expect(defaults).not.toContain('Only for DMs');
  }, 60_000);

  it('with no binding at all, says so in plain words in the thread and calls no agent', async () => {
    // Unbinding the workspace's DM masks the BINDINGS `dm` default for this workspace.
    expect(await inDm('unbind')).not.toMatch(/only admins/i);
    expect(await h.bridge.bindings.get('slack', `dm:${team()}`)).toBeUndefined();
    const hint = await askAssistant(mode === 'http' ? 'D0ADMH003' : 'D0ADMS003', `nobody home ${mode}`);
    expect(hint).toMatch(/connected to an agent/);
    expect(hint).toContain('/agent bind');
    expect(h.agent.chatCalls().some((c) => c.message.includes(`nobody home ${mode}`))).toBe(false);
    // Recorded against the workspace's DM channel, where `/agent why` in a DM reads.
    expect(await inDm('why')).toContain('not bound to an agent instance');
  }, 60_000);
});
