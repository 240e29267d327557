import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendSigned } from '../emulators/slack/sender.js';
import { logLines, startSlackBridge, W, type SlackHarness } from './harness.js';

/**
 * Signed requests no listener of the bridge takes are answered 200 at once (Bolt's default was
 * to wait 3 s and answer 404, which Slack counts as a failure): Slack's `app_rate_limited`
 * callback (logged as a warning naming the team and the minute), an empty `{}`, a modal the
 * bridge did not open, an options request.
 */
describe('Slack HTTP: requests the bridge has no listener for', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
  });
  afterAll(async () => {
    await h?.close();
  });
  const secret = () => h.slack.identity.signingSecret;

  it('acks app_rate_limited at once and warns with the team and the minute', async () => {
    const minute = Math.floor(Date.now() / 60_000) * 60;
    const body = JSON.stringify({ token: 'legacy', type: 'app_rate_limited', team_id: 'T0EMU', minute_rate_limited: minute, api_app_id: 'A0EMU0001' });
    const r = await sendSigned(h.eventsUrl, secret(), body, 'application/json');
    expect(r.status).toBe(200);
    expect(r.ms).toBeLessThan(1000);
    const warning = logLines(h, /app_rate_limited/).at(-1);
    expect(warning).toMatchObject({ level: 40, team: 'T0EMU', minute: new Date(minute * 1000).toISOString() });
    expect(String(warning?.msg)).toContain('T0EMU');
  });

  it('acks a signed {} at once', async () => {
    const r = await sendSigned(h.eventsUrl, secret(), '{}', 'application/json');
    expect(r.status).toBe(200);
    expect(r.ms).toBeLessThan(1000);
  });

  it('acks a view_submission of a modal it did not open, a view_closed and a block_suggestion at once', async () => {
    const base = { user: { id: W.user }, team: { id: 'T0EMU' }, api_app_id: 'A0EMU0001', token: 't' };
    for (const p of [
      { ...base, type: 'view_submission', trigger_id: '1.2', view: { id: 'V1', callback_id: 'someone_elses_modal', state: { values: {} }, type: 'modal' } },
      { ...base, type: 'view_closed', view: { id: 'V1', callback_id: 'someone_elses_modal', state: { values: {} }, type: 'modal' } },
      { ...base, type: 'block_suggestion', action_id: 'x', block_id: 'b', value: 'q', container: {} },
    ]) {
      const r = await h.to.interaction(p);
      expect({ type: p.type, status: r.status, fast: r.ms < 1000 }).toEqual({ type: p.type, status: 200, fast: true });
    }
  });
});
