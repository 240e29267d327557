import type { App } from '@slack/bolt';
import { errorFields } from '../../src/logger.js';
import type { Redis } from 'ioredis';
import type { AuditLog } from '../../src/audit/audit-log.js';
import { DM_CHANNEL, dmBindingChannel } from '../../src/bindings/dm.js';
import type { BindingStore } from '../../src/bindings/types.js';
import type { Config } from '../../src/config/load.js';
import type { Platform } from '../../src/core/conversation.js';
import type { Logger } from '../../src/logger.js';
import { bullPrefix } from '../../src/redis.js';
import { installationKey, type SlackInstallations } from './installations.js';

export interface UninstallDeps {
  installations: SlackInstallations;
  bindings: BindingStore;
  redis: Redis;
  config: Readonly<Config>;
  logger: Logger;
  audit?: AuditLog | undefined;
  dropQueuedWork?: ((platform: Platform, workspaceId: string) => Promise<number>) | undefined;
  forgetAccount?: ((platform: Platform, workspaceId: string) => Promise<void>) | undefined;
}

interface Where {
  teamId?: string;
  enterpriseId?: string;
  isEnterpriseInstall?: boolean;
}

/**
 * "Add to Slack" lifecycle. Bindings are keyed by channel alone, so every request an
 * installation sends records `team/channel` in a per-installation set (once per process);
 * `app_uninstalled` and `tokens_revoked` (of the bot) then remove the installation, the
 * bindings of those channels and of its workspaces' DMs (`dm:<team>`, never another
 * workspace's or the shared `dm`), the work still queued for those workspaces and their own
 * agent accounts, and audit it.
 */
export function registerUninstallListeners(app: App, deps: UninstallDeps): void {
  const prefix = bullPrefix(deps.config);
  const placesKey = (installation: string) => `${prefix}:slack:installation-places:${installation}`;
  const recorded = new Set<string>();

  app.use(async ({ body, context, next }) => {
    const place = placeOf(body as Record<string, unknown>, context.teamId);
    if (place && (context.teamId || context.enterpriseId)) {
      const installation = installationKey(context as Where);
      const member = `${place.teamId}/${place.channelId}`;
      if (!recorded.has(`${installation} ${member}`)) {
        await deps.redis.sadd(placesKey(installation), member).then(
          () => (recorded.size < 50_000 ? recorded.add(`${installation} ${member}`) : undefined),
          (err: Error) => deps.logger.warn({ ...errorFields(err) }, 'could not record where a Slack installation is used'),
        );
      }
    }
    await next();
  });

  const removeInstallation = async (where: Where, reason: string) => {
    const installation = installationKey(where);
    const places = await deps.redis.smembers(placesKey(installation));
    const teams = new Set(places.map((p) => p.slice(0, p.indexOf('/'))));
    if (where.teamId) teams.add(where.teamId);
    // Its channels and each of its workspaces' DM binding; never the shared `dm` (a place
    // recorded as `team/dm` before DM bindings were per workspace means that team's).
    const channels = new Set(places.map((p) => channelOfPlace(p)));
    for (const team of teams) channels.add(dmBindingChannel(team));
    let unbound = 0;
    for (const channelId of channels) {
      if (await deps.bindings.remove('slack', channelId)) unbound += 1;
    }
    let dropped = 0;
    for (const team of teams) dropped += (await deps.dropQueuedWork?.('slack', team)) ?? 0;
    // Its own agent account too (per-workspace accounts): reinstalled later, the workspace must
    // run setup again rather than be billed, unasked, to the key of whoever set it up before.
    for (const team of teams) await deps.forgetAccount?.('slack', team);
    await deps.installations.deleteInstallation({
      teamId: where.teamId,
      enterpriseId: where.enterpriseId,
      isEnterpriseInstall: where.isEnterpriseInstall === true,
    } as never);
    await deps.redis.del(placesKey(installation));
    recorded.clear();
    await deps.audit?.record({
      action: 'uninstall',
      actor: 'slack',
      platform: 'slack',
      workspaceId: where.isEnterpriseInstall ? where.enterpriseId! : where.teamId!,
      // The whole workspace, not one channel.
      channelId: '*',
      detail: `${reason}: ${unbound} binding(s) and ${dropped} queued message(s) removed`,
      outcome: 'ok',
    });
    deps.logger.info({ installation, reason, unbound, dropped }, 'Slack app removed from a workspace: its data is gone');
  };

  app.event('app_uninstalled', async ({ context }) => {
    await removeInstallation(context as Where, 'app_uninstalled').catch((err: Error) =>
      deps.logger.error({ ...errorFields(err) }, 'could not remove an uninstalled Slack workspace'),
    );
  });
  app.event('tokens_revoked', async ({ event, context }) => {
    // Only the bot's token matters here: revoked user tokens leave the installation working.
    if (!event.tokens.bot?.length) return;
    await removeInstallation(context as Where, 'tokens_revoked').catch((err: Error) =>
      deps.logger.error({ ...errorFields(err) }, 'could not remove a Slack workspace whose tokens were revoked'),
    );
  });
}

/** The workspace and channel a request comes from (events, slash commands, interactions). */
function placeOf(body: Record<string, unknown>, fallbackTeam: string | undefined): { teamId: string; channelId: string } | undefined {
  const event = (body.event ?? {}) as Record<string, unknown>;
  const channel = (body.channel ?? {}) as Record<string, unknown>;
  const team = (body.team ?? {}) as Record<string, unknown>;
  const channelId = str(event.channel) ?? str(body.channel_id) ?? str(channel.id);
  const teamId = str(body.team_id) ?? str(team.id) ?? fallbackTeam;
  return channelId && teamId ? { teamId, channelId: channelId.startsWith('D') ? dmBindingChannel(teamId) : channelId } : undefined;
}

/** The binding channel of a recorded `team/channel` place. */
function channelOfPlace(place: string): string {
  const slash = place.indexOf('/');
  const channelId = place.slice(slash + 1);
  return channelId === DM_CHANNEL ? dmBindingChannel(place.slice(0, slash)) : channelId;
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
