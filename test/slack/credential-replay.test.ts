import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { INPUT_ACTION, KEY_BLOCK, VALUE_BLOCK } from '../../adapters/slack/credential-modal.js';
import { dumpKeys } from '../support/redis-cleanup.js';
import { startSlackBridge, W, type SlackHarness } from './harness.js';

async function openForm(h: SlackHarness): Promise<string> {
  const ack = await h.to.command({ text: 'credential demo-helper', user: W.admin, channel: W.general });
  const open = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
  return (open.response.view as { id: string }).id;
}

const payload = (h: SlackHarness, viewId: string, key: string, value: string) =>
  h.slack.viewSubmission(viewId, W.admin, { [KEY_BLOCK]: { [INPUT_ACTION]: key }, [VALUE_BLOCK]: { [INPUT_ACTION]: value } });

const credentialCalls = (h: SlackHarness) => h.agent.calls.filter((c) => c.endpoint === 'credentials');

describe('a credential form submitted more than once', () => {
  let h: SlackHarness;
  openForAll(async () => (h = await startSlackBridge({ mode: 'http' })));

  it('calls the service once for the same view delivered twice, one after the other or at once', async () => {
    for (const together of [false, true]) {
      h.agent.reset();
      const value = `sk-canary-${randomUUID()}`;
      const submission = payload(h, await openForm(h), 'REPLAYED_KEY', value);
      const acks = together
        ? await Promise.all([h.to.interaction(submission), h.to.interaction(submission)])
        : [await h.to.interaction(submission), await h.to.interaction(submission)];
      for (const ack of acks) expect(ack.acked).toBe(true);
      expect(acks.map((a) => (a.body as { response_action?: string } | undefined)?.response_action)).toContain('clear');
      expect(credentialCalls(h)).toHaveLength(1);
      expect(h.agent.credentials.get('demo-helper')?.get('REPLAYED_KEY')).toBe(value);
      // What marks the view holds no part of the value.
      expect(await dumpKeys(h.prefix)).not.toContain(value);
    }
  });

  it('still takes the same form again after Slack showed a field error on it', async () => {
    h.agent.reset();
    const value = `sk-canary-${randomUUID()}`;
    const viewId = await openForm(h);
    const bad = await h.to.interaction(payload(h, viewId, '1 bad key', value));
    expect(bad.body).toMatchObject({ response_action: 'errors' });
    h.agent.failNext(1, { status: 400, body: { error: 'instance is busy' } }, { endpoint: 'credentials' });
    const refused = await h.to.interaction(payload(h, viewId, 'FIXED_KEY', value));
    expect((refused.body as { errors: Record<string, string> }).errors[KEY_BLOCK]).toMatch(/refused/);
    const good = await h.to.interaction(payload(h, viewId, 'FIXED_KEY', value));
    expect(good.body).toMatchObject({ response_action: 'clear' });
    expect(h.agent.credentials.get('demo-helper')?.get('FIXED_KEY')).toBe(value);
    expect(credentialCalls(h)).toHaveLength(2);
  });
});
