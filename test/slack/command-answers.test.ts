import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { startSlackBridge, W, type SlackHarness } from './harness.js';

interface Block {
  type: string;
  text?: { text: string };
  elements?: Array<{ text: string }>;
}

async function instances(h: SlackHarness) {
  const ack = await h.to.command({ text: 'instances', user: W.admin, channel: W.general });
  expect(ack.acked).toBe(true);
  const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 20_000);
  return { ack, call, blocks: JSON.parse(call.params.blocks ?? '[]') as Block[] };
}

describe('/agent instances when the agent service is slow, failing, or has many instances', () => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode: 'http' })));

  it('acks at once and answers through response_url when the listing is slow', async () => {
    h.agent.setDelay(3_500, { endpoint: 'instances' });
    const { ack, call } = await instances(h);
    expect(ack.ms).toBeLessThan(2_000);
    expect(call.status).toBe(200);
    expect(call.params.blocks).toContain('demo-helper');
    h.agent.setDelay(0, { endpoint: 'instances' });
  });

  it('says in plain words when the listing fails', async () => {
    h.agent.failNext(5, { status: 503, body: { error: 'maintenance' } }, { endpoint: 'instances' });
    const { call } = await instances(h);
    expect(call.status).toBe(200);
    expect(call.params.blocks).toMatch(/Couldn't list the instances: the agent service/);
  });

  it('shows a list longer than Slack takes in one message as far as it fits, and says how many rows are left out', async () => {
    h.agent.reset();
    const many = Array.from({ length: 600 }, (_, i) => ({ id: `inst-${i}`, name: `Name & <${i}> ${'y'.repeat(60)}`, status: 'running', type: 'chat' }));
    h.agent.instances.splice(0, h.agent.instances.length, ...many);
    const { call, blocks } = await instances(h);
    // Before: Slack refused the answer (msg_blocks_too_long) and the admin read "Something went wrong".
    expect(call.status).toBe(200);
    expect(call.params.blocks).not.toContain('Something went wrong');
    const shown = blocks.flatMap((b) => (b.text?.text.startsWith('```') ? b.text.text.split('\n') : [])).filter((l) => /^inst-\d+/.test(l));
    expect(shown[0]).toMatch(/^inst-0 /);
    expect(shown.length).toBeGreaterThan(50);
    const note = blocks.at(-1)!;
    expect(note.type).toBe('context');
    expect(note.elements?.[0]?.text).toBe(`…${600 - shown.length} of 600 rows left out to fit in one message.`);
  });
});

describe('a form whose trigger_id expired while Slack answered slowly', () => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode: 'http' })));

  it('tells the admin to run the same command again, instance included', async () => {
    // The owner's rights come from users.info, which takes longer than the trigger's 3 s.
    h.slack.setLatency((method) => (method === 'users.info' ? 3_200 : 0));
    const ack = await h.to.command({ text: 'credential demo-helper', user: W.owner, channel: W.general });
    expect(ack.ms).toBeLessThan(2_000);
    const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId, 10_000);
    expect(h.slack.callsOf('views.open').at(-1)?.response.error).toBe('expired_trigger_id');
    expect(call.params.blocks).toContain('Run `/agent credential demo-helper` again');
    h.slack.setLatency(undefined);
  });
});
