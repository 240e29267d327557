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

      const previous = await bindings.get(caller.platform, caller.channelId);
      const binding: Binding = {
        instanceId: id,
        mode: mode ?? 'mention',
        errorPolicy: previous?.errorPolicy ?? 'reply',
        context: previous?.context ?? 'off',
        ...(previous?.quota ? { quota: previous.quota } : {}),
        source: 'admin',
        updatedBy: caller.userId,
        updatedAt: now(),
      };
      await bindings.set(caller.platform, caller.channelId, binding);
      await audit(caller, { action: 'bind', instanceId: id, outcome: 'ok', detail: `mode=${binding.mode}` });

      const dm = isDmBindingChannel(caller.channelId);
      // Every direct message is addressed to the bot, so the mode says nothing there.
      const lines = dm
        ? [`${dms} now go to ${code(instance.name || id)} (${code(id)}), whoever writes them.`]
        : [`This channel now talks to ${code(instance.name || id)} (${code(id)}).`, `Mode ${code(binding.mode)}: ${MODE_WORDS[binding.mode]}.`];
      if (previous && previous.instanceId !== id) lines.push(`It was bound to ${code(previous.instanceId)} before.`);
      if (previous) lines.push(`Kept: error policy ${code(binding.errorPolicy)}, thread context ${code(binding.context)}${binding.quota ? ', quota overrides' : ''}.`);
      if (instance.status !== 'running') lines.push(`Note: the instance's status is ${code(instance.status)}, so it may not answer yet.`);
      return reply(true, dm ? 'Direct messages bound' : 'Channel bound', lines);
    },

    async unbind(caller: CommandCaller): Promise<CommandReply> {
      const previous = await bindings.get(caller.platform, caller.channelId);
      const removed = await bindings.remove(caller.platform, caller.channelId);
      if (!removed || !previous) {
        await audit(caller, { action: 'unbind', outcome: 'failed', detail: 'not bound' });
        return notBound(caller, 'unbind');
      }
      await audit(caller, { action: 'unbind', instanceId: previous.instanceId, outcome: 'ok' });
      if (isDmBindingChannel(caller.channelId)) {
        const lines = [`${dms} no longer go to ${code(previous.instanceId)}. The bot will not answer them.`];
        if (previous.source === 'default') lines.push(`The BINDINGS default for direct messages stays off in this ${deps.workspaceNoun} until someone binds them again.`);
        return reply(true, 'Direct messages unbound', lines);
      }
      const lines = [`This channel no longer talks to ${code(previous.instanceId)}. The bot will not answer here.`];
      if (previous.source === 'default') lines.push('The BINDINGS default for this channel stays off until someone binds the channel again.');
      return reply(true, 'Channel unbound', lines);
    },

    async set(caller: CommandCaller, setting: string, value: string): Promise<CommandReply> {
      const parsed = parseSetting(setting, value);
      if (!parsed.ok) return reply(false, 'Setting not changed', [parsed.error]);
      const binding = await bindings.get(caller.platform, caller.channelId);
      if (!binding) return notBound(caller, 'configure');

      const change = parsed.change;
      const next: Binding = { ...binding, updatedBy: caller.userId, updatedAt: now() };
      let line: string;
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
        const quota = { ...binding.quota };
        if (change.limit === undefined) delete quota[change.field];
        else quota[change.field] = change.limit;
        if (Object.keys(quota).length > 0) next.quota = quota;
        else delete next.quota;
        line =
          change.limit === undefined
            ? `Quota ${code(change.name)} is back to the default.`
            : `Quota ${code(change.name)} is now ${change.limit === 0 ? 'unlimited' : `${change.limit} message${change.limit === 1 ? '' : 's'}`}.`;
      }
      await bindings.set(caller.platform, caller.channelId, next);
      const canonical = describeChange(change);
      await audit(caller, { action: 'set', instanceId: binding.instanceId, outcome: 'ok', detail: `${canonical.setting} ${canonical.value}` });
      return reply(true, 'Setting changed', [line]);
    },
  };
}
