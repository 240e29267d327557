import type { Instance } from '../agent-api/types.js';
import { describeAgentProblem } from '../agent-api/problem-words.js';
import type { AuditEntry } from '../audit/audit-log.js';
import type { Binding } from '../bindings/types.js';
import { isDmBindingChannel } from '../bindings/dm.js';

import { code, reply } from './format.js';
import type { InstanceCache } from './instance-cache.js';
import type { CommandsDeps } from './options.js';
import { describeChange, parseSetting } from './settings.js';
import type { CommandCaller, CommandReply } from './types.js';

const MODE_WORDS = {
  mention: 'the bot answers when it is mentioned, replied to, or in a thread it is already part of',
  all: 'the bot answers every message in this channel',
} as const;

export type AuditWriter = (caller: CommandCaller, entry: Pick<AuditEntry, 'action' | 'outcome'> & Partial<AuditEntry>) => Promise<void>;

/** `bind`, `unbind` and `set`: the commands that change a channel's binding. */
export function createBindingCommands(deps: CommandsDeps, instancesFor: (caller: CommandCaller) => InstanceCache, audit: AuditWriter) {
  const { bindings, commandName, now } = deps;
  /** In a DM the command acts on every direct message with the bot in the workspace (`dm:<team>`), not a channel. */
  const dms = `Direct messages with the bot in this ${deps.workspaceNoun}`;
  const notBound = (caller: CommandCaller, what: string) =>
    reply(false, 'Not bound', [
      isDmBindingChannel(caller.channelId)
        ? `${dms} aren't bound to an agent instance, so there is nothing to ${what}. Bind them first: \`${commandName} bind <instance-id>\` here.`
        : `This channel isn't bound to an agent instance, so there is nothing to ${what}. Bind it first: \`${commandName} bind <instance-id>\`.`,
    ]);

  /**
   * A message is answered by the instance its channel was bound to when it was sent (the
   * instance is fixed when the message is accepted): after a rebind or an unbind, the messages
   * still waiting are answered by the old one. Says so, with how many there are.
   */
  async function stillWaiting(caller: CommandCaller, oldInstance: string, after: string): Promise<string | undefined> {
    // A DM binding's messages wait per DM, not under the binding's name: they are not counted.
    const n = deps.unfinishedIn && !isDmBindingChannel(caller.channelId) ? await deps.unfinishedIn(caller.platform, caller.channelId).catch(() => undefined) : undefined;
    if (n === 0) return undefined;
    const what = n === undefined ? 'Messages sent before this change that are still waiting' : `${n} message${n === 1 ? '' : 's'} sent before this change ${n === 1 ? 'is' : 'are'} still waiting or being answered;`;
    const rest = n === undefined ? `are still answered by ${code(oldInstance)}, the instance bound when they were sent.` : `${code(oldInstance)} answers ${n === 1 ? 'it' : 'them'}, as the instance bound when ${n === 1 ? 'it was' : 'they were'} sent.`;
    return [what, rest, after].filter(Boolean).join(' ');
  }

  /** The instance from the cached listing, or from a fresh one when the cache doesn't know it yet. */
  async function findInstance(caller: CommandCaller, id: string): Promise<Instance | undefined> {
    const instances = instancesFor(caller);
    const cached = (await instances.get()).find((i) => i.id === id);
    return cached ?? (await instances.refresh()).find((i) => i.id === id);
  }

  return {
    async bind(caller: CommandCaller, instanceId: string, mode?: 'mention' | 'all'): Promise<CommandReply> {
      const id = String(instanceId ?? '').trim();
      if (!id) return reply(false, 'Bind', [`Name the instance: \`${commandName} bind <instance-id> [mention|all]\`.`]);
      let instance: Instance | undefined;
      try {
        instance = await findInstance(caller, id);
      } catch (err) {
        const problem = describeAgentProblem(err);
        await audit(caller, { action: 'bind', instanceId: id, outcome: 'failed', detail: problem });
        return reply(false, 'Bind', [`Couldn't check instance ${code(id)}: ${problem}. Nothing was changed.`]);
      }
      if (!instance) {
        await audit(caller, { action: 'bind', instanceId: id, outcome: 'failed', detail: 'unknown instance' });
        return reply(false, 'Bind', [`No instance with ID ${code(id)}. Run ${commandName} instances to see them.`]);
      }

      // One atomic change: two admins binding at once are each told the binding they replaced.
      const bound = await bindings.update(caller.platform, caller.channelId, (current) => ({
        instanceId: id,
        mode: mode ?? 'mention',
        errorPolicy: current?.errorPolicy ?? 'reply',
        context: current?.context ?? 'off',
        ...(current?.quota ? { quota: current.quota } : {}),
        source: 'admin',
        updatedBy: caller.userId,
        updatedAt: now(),
      }));
      const { previous } = bound;
      const binding = bound.binding!; // the change above always stores one
      await audit(caller, { action: 'bind', instanceId: id, outcome: 'ok', detail: `mode=${binding.mode}` });

      const dm = isDmBindingChannel(caller.channelId);
      // Every direct message is addressed to the bot, so the mode says nothing there.
      const lines = dm
        ? [`${dms} now go to ${code(instance.name || id)} (${code(id)}), whoever writes them.`]
        : [`This channel now talks to ${code(instance.name || id)} (${code(id)}).`, `Mode ${code(binding.mode)}: ${MODE_WORDS[binding.mode]}.`];
      if (previous && previous.instanceId !== id) {
        lines.push(`It was bound to ${code(previous.instanceId)} before.`);
        const waiting = await stillWaiting(caller, previous.instanceId, 'Messages from now on go to the new one.');
        if (waiting) lines.push(waiting);
      }
      if (previous) lines.push(`Kept: error policy ${code(binding.errorPolicy)}, thread context ${code(binding.context)}${binding.quota ? ', quota overrides' : ''}.`);
      if (instance.status !== 'running') lines.push(`Note: the instance's status is ${code(instance.status)}, so it may not answer yet.`);
      return reply(true, dm ? 'Direct messages bound' : 'Channel bound', lines);
    },

    async unbind(caller: CommandCaller): Promise<CommandReply> {
      const previous = await bindings.remove(caller.platform, caller.channelId);
      if (!previous) {
        await audit(caller, { action: 'unbind', outcome: 'failed', detail: 'not bound' });
        return notBound(caller, 'unbind');
      }
      await audit(caller, { action: 'unbind', instanceId: previous.instanceId, outcome: 'ok' });
      if (isDmBindingChannel(caller.channelId)) {
        const lines = [`${dms} no longer go to ${code(previous.instanceId)}. The bot will not answer new ones.`];
        if (previous.source === 'default') lines.push(`The BINDINGS default for direct messages stays off in this ${deps.workspaceNoun} until someone binds them again.`);
        const waiting = await stillWaiting(caller, previous.instanceId, '');
        if (waiting) lines.push(waiting);
        return reply(true, 'Direct messages unbound', lines);
      }
      const lines = [`This channel no longer talks to ${code(previous.instanceId)}. The bot will not answer new messages here.`];
      if (previous.source === 'default') lines.push('The BINDINGS default for this channel stays off until someone binds the channel again.');
      const waiting = await stillWaiting(caller, previous.instanceId, '');
      if (waiting) lines.push(waiting);
      return reply(true, 'Channel unbound', lines);
    },

    async set(caller: CommandCaller, setting: string, value: string): Promise<CommandReply> {
      const parsed = parseSetting(setting, value);
      if (!parsed.ok) return reply(false, 'Setting not changed', [parsed.error]);
      const change = parsed.change;
      let line = '';
      // Atomic, so a bind or unbind landing meanwhile is neither undone nor brought back.
      const { previous: binding } = await bindings.update(caller.platform, caller.channelId, (current) => {
        if (!current) return undefined;
        const next: Binding = { ...current, updatedBy: caller.userId, updatedAt: now() };
        if (change.setting === 'errors') {
          next.errorPolicy = change.value;
          line = {
            reply: 'When a message fails, the bot replies in plain words with a reference ID.',
            reaction: 'When a message fails, the bot only adds a warning reaction to it.',
            silent: 'When a message fails, nothing is shown in the channel; it is only logged.',
          }[change.value];
        } else if (change.setting === 'context') {
          next.context = change.value;
          line =
            change.value === 'thread'
              ? "Messages in a thread now go to the agent with the thread's earlier messages before them."
              : 'Messages go to the agent on their own, without the thread before them.';
        } else {
          const quota = { ...current.quota };
          if (change.limit === undefined) delete quota[change.field];
          else quota[change.field] = change.limit;
          if (Object.keys(quota).length > 0) next.quota = quota;
          else delete next.quota;
          line =
            change.limit === undefined
              ? `Quota ${code(change.name)} is back to the default.`
              : `Quota ${code(change.name)} is now ${change.limit === 0 ? 'unlimited' : `${change.limit} message${change.limit === 1 ? '' : 's'}`}.`;
        }
        return next;
      });
      if (!binding) return notBound(caller, 'configure');
      const canonical = describeChange(change);
      await audit(caller, { action: 'set', instanceId: binding.instanceId, outcome: 'ok', detail: `${canonical.setting} ${canonical.value}` });
      return reply(true, 'Setting changed', [line]);
    },
  };
}
