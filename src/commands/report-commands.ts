import type { QuotaLimits } from '../config/load.js';
import { describeAgentProblem } from '../agent-api/problem-words.js';
import { describeReason } from '../diagnostics/drop-log.js';
import { errorFields } from '../logger.js';
import { probeWithin } from './agent-errors.js';
import { isDmBindingChannel } from '../bindings/dm.js';
import { ago, code, reply, utcMinute } from './format.js';
import type { InstanceCache } from './instance-cache.js';
import type { CommandsDeps } from './options.js';
import type { CommandCaller, CommandReply } from './types.js';

/** How many unanswered messages `why` explains, and how many audit entries `audit` shows. */
const WHY_COUNT = 5;
const AUDIT_COUNT = 15;

function limitText(n: number, unit: string): string {
  return n === 0 ? `unlimited per ${unit}` : `${n} per ${unit}`;
}

function usageText(used: number, limit: number, window: string): string {
  return limit === 0 ? `${used} this ${window} (no limit)` : `${used} of ${limit} this ${window}`;
}

function userLimits(l: QuotaLimits): string {
  return `Per-user limits: ${limitText(l.userPerMinute, 'minute')}, ${limitText(l.userPerDay, 'day')}.`;
}

/** `status`, `why` and `audit`: read-only reports about a channel. */
export function createReportCommands(deps: CommandsDeps, instancesFor: (caller: CommandCaller) => InstanceCache) {
  const { bindings, quota, dropLog, audit, queueStats, probeTimeoutMs, commandName, now, logger } = deps;
  const dms = `Direct messages with the bot in this ${deps.workspaceNoun}`;

  return {
    async status(caller: CommandCaller): Promise<CommandReply> {
      const binding = await bindings.get(caller.platform, caller.channelId);
      // Our timeout answers first; the abort then ends a request that is still hanging.
      const probe = new AbortController();
      const [queue, list, usage] = await Promise.allSettled([
        probeWithin(queueStats(), probeTimeoutMs, 'queue figures'),
        probeWithin(instancesFor(caller).refresh(probe.signal), probeTimeoutMs, 'listing instances'),
        quota.usage({ platform: caller.platform, channelId: caller.channelId, overrides: binding?.quota }),
      ]);
      probe.abort();

      const lines: string[] = [];
      // In a DM the command reports on the workspace's direct messages with the bot, where every message is addressed.
      const dm = isDmBindingChannel(caller.channelId);
      if (binding) {
        lines.push(
          `${dm ? `${dms}: bound` : 'Bound'} to ${code(binding.instanceId)}${binding.source === 'default' ? ' (BINDINGS default)' : binding.updatedBy ? ` (by ${code(binding.updatedBy)})` : ''}.`,
          dm
            ? `Error policy ${code(binding.errorPolicy)}, thread context ${code(binding.context)}.`
            : `Mode ${code(binding.mode)}, error policy ${code(binding.errorPolicy)}, thread context ${code(binding.context)}.`,
        );
      } else if (dm) {
        lines.push(`${dms}: not bound, so the bot doesn't answer them. Bind them with \`${commandName} bind <instance-id>\` here.`);
      } else {
        lines.push(`Not bound: the bot doesn't answer here. Bind it with \`${commandName} bind <instance-id>\`.`);
      }

      if (list.status === 'fulfilled') {
        const mine = binding && list.value.find((i) => i.id === binding.instanceId);
        let line = `Agent service: answering (${list.value.length} instance${list.value.length === 1 ? '' : 's'}).`;
        if (binding) line += mine ? ` Instance status: ${code(mine.status)}.` : ` Instance ${code(binding.instanceId)} is not in the list any more.`;
        lines.push(line);
      } else {
        lines.push(`Agent service: not answering: ${describeAgentProblem(list.reason)}.`);
      }

      if (queue.status === 'fulfilled') {
        const q = queue.value;
        lines.push(`Queue: ${q.waiting} waiting, ${q.active} active, ${q.delayed} delayed, ${q.failed} failed.`);
      } else {
        logger.warn({ ...errorFields(queue.reason) }, 'status: queue figures unavailable');
        lines.push('Queue: figures unavailable right now.');
      }

      if (usage.status === 'fulfilled') {
        const u = usage.value;
        // With no limit at all nothing may be counted, so a count would read as a misleading 0.
        const where = dm ? 'Direct messages' : 'Messages in this channel';
        lines.push(
          u.limits.channelPerMinute === 0 && u.limits.channelPerDay === 0
            ? `${where}: no channel limits.`
            : `${where}: ${usageText(u.minute, u.limits.channelPerMinute, 'minute')}, ${usageText(u.day, u.limits.channelPerDay, 'day')}.`,
          userLimits(u.limits),
        );
      } else {
        logger.warn({ ...errorFields(usage.reason) }, 'status: usage unavailable');
        lines.push('Usage: unavailable right now.');
      }
      return reply(true, dm ? 'Status of direct messages' : 'Status of this channel', lines);
    },

    /**
     * The drop log of the caller's binding channel. In a DM that is the workspace's own DM channel
     * (Slack's `dm:<team>`, from the adapter's caller), so no workspace reads another's failures.
     */
    async why(caller: CommandCaller): Promise<CommandReply> {
      const [entries, binding] = await Promise.all([
        dropLog.recent(caller.platform, caller.channelId, WHY_COUNT),
        bindings.get(caller.platform, caller.channelId),
      ]);
      const lines: string[] = [];
      const dm = isDmBindingChannel(caller.channelId);
      if (!binding) {
        lines.push(
          dm
            ? `${dms} are not bound, so the bot answers none of them. Bind them with \`${commandName} bind <instance-id>\` here.`
            : `This channel is not bound, so the bot answers nothing here. Bind it with \`${commandName} bind <instance-id>\`.`,
        );
      }
      if (entries.length === 0) {
        lines.push(`No unanswered messages were recorded in ${dm ? 'direct messages' : 'this channel'} in the last 7 days.`);
      } else {
        const t = now();
        lines.push(`The last ${entries.length === 1 ? 'message' : `${entries.length} messages`} here that got no answer, newest first:`);
        for (const e of entries) lines.push(`• ${ago(e.at, t)}, from ${code(e.userId)}: ${describeReason(e)}.`);
      }
      return reply(true, 'Why no answer?', lines);
    },

    async audit(caller: CommandCaller): Promise<CommandReply> {
      const entries = await audit.recent(AUDIT_COUNT, { platform: caller.platform, workspaceId: caller.workspaceId });
      if (entries.length === 0) return reply(true, 'Audit log', ['No admin actions have been recorded here yet.']);
      const rows = entries.map((e) => [
        utcMinute(e.at),
        e.actorName ? `${e.actorName} (${e.actor})` : e.actor,
        e.action,
        e.channelId,
        e.instanceId ?? '',
        e.key ?? '',
        e.outcome,
        e.detail ?? '',
      ]);
      return reply(
        true,
        'Audit log',
        [`The last ${entries.length} admin action${entries.length === 1 ? '' : 's'} in this ${deps.workspaceNoun}, newest first.`],
        { columns: ['When', 'Who', 'Action', 'Channel', 'Instance', 'Key', 'Outcome', 'Detail'], rows },
      );
    },
  };
}
