import type { App } from '@slack/bolt';
import type { AuditLog } from '../../src/audit/audit-log.js';
import type { BindingStore } from '../../src/bindings/types.js';
import { errorFields, type Logger } from '../../src/logger.js';
import { GONE_WORDS, type GoneChannels, type GoneCode } from './gone-channels.js';

export interface ChannelLifeDeps {
  gone: GoneChannels;
  bindings: BindingStore;
  logger: Logger;
  audit?: AuditLog | undefined;
}

/** Slack's events that say the bot can no longer post in a channel, and what a post would meet. */
const GONE: Readonly<Record<string, GoneCode>> = {
  channel_archive: 'is_archived',
  group_archive: 'is_archived',
  channel_deleted: 'channel_not_found',
  group_deleted: 'channel_not_found',
  channel_left: 'not_in_channel',
  group_left: 'not_in_channel',
};
/** ... and those that say it can again. */
const BACK = ['channel_unarchive', 'group_unarchive'] as const;

/** Every event this module listens to (ack-hold.ts: their ack waits for the mark). */
export const CHANNEL_LIFE_EVENTS: readonly string[] = [...Object.keys(GONE), ...BACK, 'member_left_channel', 'member_joined_channel'];


/**
 * A channel archived, deleted, or left by the bot (removed by someone) while messages of it wait
 * or the agent works: marked for the workers (gone-channels.ts), who then give those messages up
 * without calling the agent. A deleted channel's binding is removed and audited: Slack never
 * brings a deleted channel (or its ID) back, so the binding could never route again: it would be
 * dead configuration, and a BINDINGS default is masked so that a restart does not bring it back
 * either. An archived channel keeps its binding: unarchived, it is the same
 * channel, and its admin expects the bot to answer there as before.
 */
export function registerChannelLifeListeners(app: App, deps: ChannelLifeDeps): void {
  const gone = async (channel: string, code: GoneCode, team: string | undefined) => {
    try {
      if (await deps.gone.mark(channel, code)) return;
    } catch (err) {
      deps.logger.warn({ channel, ...errorFields(err) }, 'could not record that a Slack channel went away: its queued messages may still be sent to the agent');
    }
    if (code !== 'channel_not_found') return deps.logger.info({ channel, code }, `${GONE_WORDS[code]}: its queued messages will not be sent to the agent`);
    const unbound = (await deps.bindings.remove('slack', channel).catch((err: unknown) => {
      deps.logger.warn({ channel, ...errorFields(err) }, 'could not remove the binding of a deleted Slack channel');
      return undefined;
    })) !== undefined;
    deps.logger.info({ channel, code, unbound }, `${GONE_WORDS[code]}: its queued messages will not be sent to the agent${unbound ? ', and its binding was removed' : ''}`);
    if (unbound) {
      await deps.audit
        ?.record({ action: 'unbind', actor: 'slack', platform: 'slack', workspaceId: team ?? '', channelId: channel, detail: 'channel_deleted: the channel was deleted in Slack', outcome: 'ok' })
        .catch(() => {});
    }
  };
  const back = (channel: string) =>
    deps.gone.clear(channel).catch((err: unknown) => deps.logger.warn({ channel, ...errorFields(err) }, 'could not record that a Slack channel is back'));

  for (const [type, code] of Object.entries(GONE)) {
    app.event(type, async ({ event, body }) => {
      const channel = (event as { channel?: unknown }).channel;
      if (typeof channel === 'string') await gone(channel, code, (body as { team_id?: string }).team_id);
    });
  }
  for (const type of BACK) {
    app.event(type, async ({ event }) => {
      const channel = (event as { channel?: unknown }).channel;
      if (typeof channel === 'string') await back(channel);
    });
  }
  // Another member's comings and goings are not the bot's business; only its own are.
  app.event('member_left_channel', async ({ event, context, body }) => {
    const e = event as { user?: unknown; channel?: unknown };
    if (e.user === context.botUserId && typeof e.channel === 'string') await gone(e.channel, 'not_in_channel', (body as { team_id?: string }).team_id);
  });
  app.event('member_joined_channel', async ({ event, context }) => {
    const e = event as { user?: unknown; channel?: unknown };
    if (e.user === context.botUserId && typeof e.channel === 'string') await back(e.channel);
  });
}
