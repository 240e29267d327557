import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { INPUT_ACTION, KEY_BLOCK, VALUE_BLOCK } from '../../adapters/slack/credential-modal.js';
import { createAuditLog } from '../../src/audit/audit-log.js';
import { startSlackBridge, W, type SlackHarness } from './harness.js';

/** Runs `/agent <text>` and returns the text of the ephemeral answer. */
async function run(h: SlackHarness, text: string, user: string, extra: { enterprise?: string } = {}): Promise<string> {
  const ack = await h.to.command({ text, user, channel: W.general, ...extra });
  expect(ack.acked).toBe(true);
  const call = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
  expect(call.params.response_type).toBe('ephemeral');
  return call.params.blocks ?? '';
}

describe('who counts as a Slack admin for /agent', () => {
  let h: SlackHarness;
  openForAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
    // Admins of their own workspace: a partner organisation's, over Slack Connect in #general.
    h.slack.addUser({ id: 'UPARTNER1', name: 'Pat Partner', isAdmin: true, teamId: 'T0PARTNER' });
    h.slack.addUser({ id: 'UPARTOWN1', name: 'Pia Partner Owner', isOwner: true, teamId: 'T0PARTNER', enterpriseId: 'E0PARTNER' });
    // Slack keeps the role flags of a deactivated member.
    h.slack.addUser({ id: 'UGONEADM1', name: 'Gone Admin', isAdmin: true, deleted: true });
    h.slack.addUser({ id: 'UGUESTAD1', name: 'Guest', isAdmin: true, guest: 'single' });
    h.slack.addUser({ id: 'UWSADMIN1', name: 'Wanda Workspace Admin', isAdmin: true });
    // Enterprise Grid: an admin whose own workspace is another of the same organisation.
    h.slack.addUser({ id: 'UGRIDADM1', name: 'Gia Grid', isAdmin: true, teamId: 'T0SISTER', enterpriseId: 'E0ORG' });
    return h;
  });

  it.each(['UPARTNER1', 'UPARTOWN1', 'UGONEADM1', 'UGUESTAD1'])('refuses %s plainly and changes nothing', async (user) => {
    const before = await h.bridge.bindings.get('slack', W.general);
    const text = await run(h, 'unbind', user);
    expect(text).toContain('Only admins can use /agent');
    expect(await h.bridge.bindings.get('slack', W.general)).toEqual(before);
    expect(before?.instanceId).toBe('demo-helper');
  });

  it('lets this workspace’s admins run it, and a Grid admin of the same organisation', async () => {
    expect(await run(h, 'instances', 'UWSADMIN1')).toContain('demo-helper');
    expect(await run(h, 'instances', 'UGRIDADM1', { enterprise: 'E0ORG' })).toContain('demo-helper');
    expect(await run(h, 'instances', 'UGRIDADM1')).toContain('Only admins can use /agent');
  });

  it('asks Slack again when the credential form is sent: an admin demoted meanwhile adds nothing', async () => {
    const ack = await h.to.command({ text: 'credential demo-helper', user: 'UWSADMIN1', channel: W.general });
    const open = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
    const viewId = (open.response.view as { id: string }).id;
    h.slack.addUser({ id: 'UWSADMIN1', name: 'Wanda Workspace Admin', isAdmin: false });
    const value = `sk-canary-${randomUUID()}`;
    const submitted = await h.to.interaction(
      h.slack.viewSubmission(viewId, 'UWSADMIN1', { [KEY_BLOCK]: { [INPUT_ACTION]: 'DEMOTED_KEY' }, [VALUE_BLOCK]: { [INPUT_ACTION]: value } }),
    );
    expect((submitted.body as { errors: Record<string, string> }).errors[KEY_BLOCK]).toMatch(/Only admins/);
    expect(h.agent.credentials.get('demo-helper')?.has('DEMOTED_KEY')).toBeFalsy();
    expect(h.agent.calls.filter((c) => c.endpoint === 'credentials')).toHaveLength(0);
  });

  it('asks an admin to press Save again when Slack does not answer the check, refusing and auditing nothing', async () => {
    h.slack.addUser({ id: 'UWSADMIN2', name: 'Walt Workspace Admin', isAdmin: true });
    const ack = await h.to.command({ text: 'credential demo-helper', user: 'UWSADMIN2', channel: W.general });
    const open = await h.slack.waitForCall('views.open', (c) => c.params.trigger_id === ack.triggerId);
    const viewId = (open.response.view as { id: string }).id;
    h.slack.fail('users.info', { error: 'ratelimited', retryAfterSeconds: 1 });
    const values = { [KEY_BLOCK]: { [INPUT_ACTION]: 'LIMITED_KEY' }, [VALUE_BLOCK]: { [INPUT_ACTION]: `sk-canary-${randomUUID()}` } };
    const limited = await h.to.interaction(h.slack.viewSubmission(viewId, 'UWSADMIN2', values));
    expect(limited.ms).toBeLessThan(3_000);
    expect((limited.body as { errors: Record<string, string> }).errors[KEY_BLOCK]).toMatch(/didn't let me check your admin rights/);
    const audit = await createAuditLog({ redis: h.bridge.redis, prefix: `${h.prefix}:chat` }).recent(50, { platform: 'slack', workspaceId: 'T0EMU' });
    expect(audit.filter((e) => e.actor === 'UWSADMIN2')).toHaveLength(0);
    expect(h.agent.calls.filter((c) => c.endpoint === 'credentials')).toHaveLength(0);
    // Sent again once Slack answers: added.
    const again = await h.to.interaction(h.slack.viewSubmission(viewId, 'UWSADMIN2', values));
    expect(again.body).toMatchObject({ response_action: 'clear' });
    expect(h.agent.credentials.get('demo-helper')?.has('LIMITED_KEY')).toBe(true);
  });
});
