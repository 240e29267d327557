import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../src/audit/audit-log.js';
import { startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * `/agent` by a workspace owner while Slack rate-limits `users.info`: still refused (no one
 * passes unchecked), but told that Slack would not let the bridge check just now and to try
 * again, and not written to the audit log as a non-admin's refused attempt. A real non-admin
 * is still refused as before, and audited.
 */
describe('admin check when users.info is rate limited', () => {
  let h: SlackHarness;
  let redis: Redis;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
    redis = new Redis();
  });
  afterAll(async () => {
    redis?.disconnect();
    await h?.close();
  });

  const audit = () => createAuditLog({ redis, prefix: `${h.prefix}:chat` });
  async function command(user: string, text: string) {
    const r = await h.to.command({ text, user, channel: W.general });
    return (await h.slack.waitForCall('response_url', (c) => c.response.id === r.responseUrlId, 15_000)).rawBody;
  }

  it('tells an owner to try again, without "only admins" and without an audit entry', async () => {
    h.slack.fail('users.info', { error: 'ratelimited', retryAfterSeconds: 1 });
    const answer = await command(W.owner, 'status');
    expect(answer).toMatch(/didn't let me check your admin rights just now/);
    expect(answer).toMatch(/try again in a moment/);
    expect(answer).not.toMatch(/Only admins/);
    expect((await audit().recent(10, { platform: 'slack', workspaceId: 'T0EMU' })).map((e) => e.action)).not.toContain('refused');
    // Once Slack answers, the owner's command runs.
    expect(await command(W.owner, 'status')).not.toMatch(/Only admins|didn't let me check/);
  });

  it('still refuses a non-admin with "only admins", audited', async () => {
    const answer = await command(W.user, 'status');
    expect(answer).toMatch(/Only admins can use/);
    expect((await audit().recent(10, { platform: 'slack', workspaceId: 'T0EMU' })).map((e) => e.action)).toContain('refused');
  });
});
