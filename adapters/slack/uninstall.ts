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
  /** Deletes the assistant threads (their transcripts) recorded in these DM channels. */
  forgetAssistantDms?: ((dms: Iterable<string>) => Promise<number>) | undefined;
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
 * agent accounts, and audit it. `team_access_revoked` (an org-wide install losing some of its
 * workspaces) removes those workspaces' part the same way and keeps the installation.
 */
export function registerUninstallListeners(app: App, deps: UninstallDeps): void {
  const prefix = bullPrefix(deps.config);
  const placesKey = (installation: string) => `${prefix}:slack:installation-places:${installation}`;
  // The DM channels themselves (`team/D…`): their assistant threads hold transcripts to delete.
  const dmsKey = (installation: string) => `${prefix}:slack:installation-dms:${installation}`;
  const recorded = new Set<string>();
  const record = async (key: string, member: string) => {
    if (recorded.has(`${key} ${member}`)) return;
    await deps.redis.sadd(key, member).then(
      () => (recorded.size < 50_000 ? recorded.add(`${key} ${member}`) : undefined),
      (err: Error) => deps.logger.warn({ ...errorFields(err) }, 'could not record where a Slack installation is used'),
    );
  };

  app.use(async ({ body, context, next }) => {
    const place = placeOf(body as Record<string, unknown>, context.teamId);
    if (place && (context.teamId || context.enterpriseId)) {
      const installation = installationKey(context as Where);
      // Not awaited: the request's ack must not wait for Redis (a stalled Redis made `/agent`
      // miss Slack's 3 s). A record that fails is only warned about, and tried on the next request.
      void record(placesKey(installation), `${place.teamId}/${place.channelId}`);
      if (place.dm) void record(dmsKey(installation), `${place.teamId}/${place.dm}`);
    }
    await next();
  });

  /**
   * Unbinds `teams`' channels (of `places`) and DMs, drops their queued work and their own agent
   * accounts, and deletes the assistant threads of their DM channels (`dms`, `team/D…`).
   */
  const clearWorkspaces = async (places: string[], dms: string[], teams: ReadonlySet<string>) => {
    // Their channels and each workspace's DM binding; never the shared `dm` (a place recorded
    // as `team/dm` before DM bindings were per workspace means that team's).
    const channels = new Set(places.map((p) => channelOfPlace(p)));
    for (const team of teams) channels.add(dmBindingChannel(team));
    let unbound = 0;
    for (const channelId of channels) {
      if (await deps.bindings.remove('slack', channelId)) unbound += 1;
    }
    let dropped = 0;
    for (const team of teams) dropped += (await deps.dropQueuedWork?.('slack', team)) ?? 0;
    // Their own agent accounts too (per-workspace accounts): reinstalled later, a workspace must
    // run setup again rather than be billed, unasked, to the key of whoever set it up before.
    for (const team of teams) await deps.forgetAccount?.('slack', team);
    // What users said to the agent in assistant threads: Slack asks apps to delete data on uninstall.
    await deps.forgetAssistantDms?.(dms.filter((d) => teams.has(teamOfPlace(d))).map(channelOfDm));
    return { unbound, dropped };
  };

  const removeInstallation = async (where: Where, reason: string) => {
    const installation = installationKey(where);
    const places = await deps.redis.smembers(placesKey(installation));
    const dms = await deps.redis.smembers(dmsKey(installation));
    const teams = new Set([...places, ...dms].map(teamOfPlace));
    if (where.teamId) teams.add(where.teamId);
    const { unbound, dropped } = await clearWorkspaces(places, dms, teams);
    await deps.installations.deleteInstallation({
      teamId: where.teamId,
      enterpriseId: where.enterpriseId,
      isEnterpriseInstall: where.isEnterpriseInstall === true,
    } as never);
    await deps.redis.del(placesKey(installation));
    await deps.redis.del(dmsKey(installation));
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

  /**
   * An org-wide install lost some of its workspaces (`team_access_revoked`): the installation
   * stays for the others; those workspaces' bindings, queued work and own accounts go, as on
   * an uninstall.
   */
  const removeWorkspaces = async (where: Where, teamIds: readonly string[]) => {
    const installation = installationKey(where);
    const teams = new Set(teamIds);
    const places = (await deps.redis.smembers(placesKey(installation))).filter((p) => teams.has(teamOfPlace(p)));
    const dms = (await deps.redis.smembers(dmsKey(installation))).filter((p) => teams.has(teamOfPlace(p)));
    const { unbound, dropped } = await clearWorkspaces(places, dms, teams);
    if (places.length) await deps.redis.srem(placesKey(installation), ...places);
    if (dms.length) await deps.redis.srem(dmsKey(installation), ...dms);
    recorded.clear();
    for (const team of teams) {
      await deps.audit?.record({
        action: 'uninstall',
        actor: 'slack',
        platform: 'slack',
        workspaceId: team,
        channelId: '*',
        detail: `team_access_revoked: the org-wide app no longer reaches this workspace`,
        outcome: 'ok',
      });
    }
    deps.logger.info({ installation, workspaces: [...teams], unbound, dropped }, 'Slack org-wide app removed from some workspaces: their data is gone');
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
  app.event('team_access_revoked', async ({ event, context }) => {
    const teamIds = Array.isArray(event.team_ids) ? event.team_ids.filter((t): t is string => typeof t === 'string' && t !== '') : [];
    if (!teamIds.length) return;
    await removeWorkspaces(context as Where, teamIds).catch((err: Error) =>
      deps.logger.error({ ...errorFields(err) }, 'could not remove the Slack workspaces an org-wide app lost'),
    );
  });
}

/** The workspace and channel a request comes from (events, slash commands, interactions). */
function placeOf(body: Record<string, unknown>, fallbackTeam: string | undefined): { teamId: string; channelId: string; dm?: string } | undefined {
  const event = (body.event ?? {}) as Record<string, unknown>;
  const channel = (body.channel ?? {}) as Record<string, unknown>;
  const team = (body.team ?? {}) as Record<string, unknown>;
  const channelId = str(event.channel) ?? str(body.channel_id) ?? str(channel.id);
  const teamId = str(body.team_id) ?? str(team.id) ?? fallbackTeam;
  if (!channelId || !teamId) return undefined;
  return channelId.startsWith('D') ? { teamId, channelId: dmBindingChannel(teamId), dm: channelId } : { teamId, channelId };
}

/** The DM channel of a recorded `team/D…`. */
const channelOfDm = (dm: string) => dm.slice(dm.indexOf('/') + 1);

/** The workspace of a recorded `team/channel` place. */
const teamOfPlace = (place: string) => place.slice(0, place.indexOf('/'));

/** The binding channel of a recorded `team/channel` place. */
function channelOfPlace(place: string): string {
  const slash = place.indexOf('/');
  const channelId = place.slice(slash + 1);
  return channelId === DM_CHANNEL ? dmBindingChannel(place.slice(0, slash)) : channelId;
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
