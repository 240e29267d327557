import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { createMessageHandler } from '../../adapters/slack/message-listener.js';
import type { IncomingMessage } from '../../src/core/message.js';

/** The message handler with "Add to Slack": replies name their installation, with or without Bolt's context. */
function rig() {
  const seen: IncomingMessage[] = [];
  const handler = createMessageHandler({
    ingress: { handle: async (m) => (seen.push(m), { status: 'queued', jobId: 'j' }) },
    logger: pino({ level: 'silent' }),
    identity: () => Promise.reject(new Error('no single bot token with Add to Slack')),
    seen: { first: async () => true, firstHere: () => true, lease: async () => ({ kind: 'taken', lease: { settle: async () => {}, release: async () => {}, stop: () => {} } }), forget: async () => {} },
    multiWorkspace: true,
  });
  return { handler, seen };
}

const envelope = (o: { team: string; enterprise?: string; orgWide?: boolean; ts: string }) => ({
  team_id: o.team,
  ...(o.enterprise ? { enterprise_id: o.enterprise } : {}),
  authorizations: [{ team_id: o.orgWide ? null : o.team, enterprise_id: o.enterprise ?? null, user_id: 'UBOT0001', is_bot: true, is_enterprise_install: o.orgWide === true }],
  event: { type: 'app_mention', user: 'UUSER0001', text: '<@UBOT0001> hi', ts: o.ts, channel: 'C1', team: o.team, event_ts: o.ts },
});

describe('Slack message handler with "Add to Slack"', () => {
  it('names the installation from Bolt\'s context', async () => {
    const { handler, seen } = rig();
    await handler(envelope({ team: 'T1', ts: '1700000000.000100' }), undefined, { botUserId: 'UBOT0001', teamId: 'T1', isEnterpriseInstall: false });
    expect(seen.map((m) => [m.reply.installation, m.mentionsBot])).toEqual([['team:T1', true]]);
  });

  it('without Bolt\'s context (assistant threads) reads it from the envelope, org-wide installs by enterprise', async () => {
    const { handler, seen } = rig();
    await handler(envelope({ team: 'T2', ts: '1700000000.000200' }));
    await handler(envelope({ team: 'T3', enterprise: 'E1', orgWide: true, ts: '1700000000.000300' }));
    expect(seen.map((m) => [m.reply.installation, m.mentionsBot])).toEqual([
      ['team:T2', true],
      ['enterprise:E1', true],
    ]);
  });
});
