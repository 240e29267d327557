import type { Instance } from '../agent-api/types.js';
import { describeAgentProblem } from '../agent-api/problem-words.js';
import { newReference } from '../core/reference.js';
import { secrets as processSecrets, errorFields } from '../logger.js';
import { sentence } from './agent-errors.js';
import { createBindingCommands, type AuditWriter } from './binding-commands.js';
import { createCredentialFormCheck, createCredentialHandler } from './credential.js';
import { code, reply } from './format.js';
import { createInstanceCache } from './instance-cache.js';
import { createSetupHandler } from './setup.js';
import { workspaceAgent } from '../accounts/caller-agent.js';
import { createNativeCommands } from './native-commands.js';
import type { CommandsDeps, CommandsOptions } from './options.js';
import { createReportCommands } from './report-commands.js';
import { helpLines } from './help-lines.js';
import type { CommandCaller, CommandName, CommandReply, Commands } from './types.js';

export type { CommandsOptions, QueueStats } from './options.js';

/**
 * The platform-neutral admin commands. Adapters check admin rights, translate their input
 * into these calls and render the `CommandReply`. No handler throws: an unexpected failure
 * becomes a plain-words reply with a reference ID that is also in the log line.
 */
export function createCommands(options: CommandsOptions): Commands {
  const deps: CommandsDeps = {
    ...options,
    instanceCacheMs: options.instanceCacheMs ?? 30_000,
    probeTimeoutMs: options.probeTimeoutMs ?? 3_000,
    commandName: options.commandName ?? '/agent',
    workspaceNoun: options.workspaceNoun ?? 'workspace',
    argumentStyle: options.argumentStyle ?? 'words',
    secrets: options.secrets ?? processSecrets,
    now: options.now ?? Date.now,
  };
  const { agentApi, logger, commandName, now } = deps;
  const shared = { agent: agentApi, instances: createInstanceCache(agentApi, deps.instanceCacheMs, now) };
  const workspaces = new Map<string, typeof shared>();
  /** The caller's agent client and instance listing: the deployment's, or its workspace's own. */
  const scopeOf = (caller?: Pick<CommandCaller, 'platform' | 'workspaceId'>): typeof shared => {
    if (!deps.accounts || !caller) return shared;
    const key = `${caller.platform}:${caller.workspaceId}`;
    let scope = workspaces.get(key);
    if (!scope) {
      const agent = workspaceAgent(deps.accounts, caller.platform, caller.workspaceId);
      scope = { agent, instances: createInstanceCache(agent, deps.instanceCacheMs, now) };
      if (workspaces.size >= 10_000) workspaces.clear();
      workspaces.set(key, scope);
    }
    return scope;
  };
  const instancesFor = (caller: CommandCaller) => scopeOf(caller).instances;

  const audit: AuditWriter = async (caller, entry) => {
    // An operator sees admin actions at info without reading the audit stream
    // (credentials log their own line; refusals theirs).
    if (entry.action === 'bind' || entry.action === 'unbind' || entry.action === 'set') {
      logger.info(
        { action: entry.action, outcome: entry.outcome, instanceId: entry.instanceId, detail: entry.detail, platform: caller.platform, channelId: caller.channelId, userId: caller.userId },
        'admin action',
      );
    }
    try {
      await deps.audit.record({
        actor: caller.userId,
        ...(caller.userName ? { actorName: caller.userName } : {}),
        platform: caller.platform,
        workspaceId: caller.workspaceId,
        channelId: caller.channelId,
        ...entry,
        at: now(),
      });
    } catch (err) {
      // The action itself happened (or was refused); a lost audit line must not hide that.
      logger.error({ ...errorFields(err), action: entry.action, userId: caller.userId }, 'could not write the audit entry');
    }
  };

  /** Runs a handler; an unexpected error becomes a reply with a reference ID. */
  async function guard(name: CommandName, caller: CommandCaller, run: () => Promise<CommandReply>): Promise<CommandReply> {
    try {
      // What the agent service listed (an instance's name) may quote a secret: every platform shows it redacted.
      return redactReply(await run(), (text) => deps.secrets.redact(text));
    } catch (err) {
      const ref = newReference();
      logger.error({ ...errorFields(err), ref, command: name, platform: caller.platform, channelId: caller.channelId }, 'command failed');
      return reply(false, 'Something went wrong', [
        `${commandName} ${name} failed unexpectedly. Please try again; if it keeps failing, give your operator the reference ${code(ref)}.`,
      ]);
    }
  }

  const bindingCommands = createBindingCommands(deps, instancesFor, audit);
  const reports = createReportCommands(deps, instancesFor);
  const credential = createCredentialHandler(deps, (caller) => scopeOf(caller).agent);
  const credentialForm = createCredentialFormCheck(deps, (caller) => scopeOf(caller).agent);
  const setup = createSetupHandler(deps, audit, (caller) => workspaces.delete(`${caller.platform}:${caller.workspaceId}`));
  const native = createNativeCommands(deps, audit);

  return {
    help() {
      return reply(true, 'agent-bridge commands', helpLines(commandName, deps.workspaceNoun, deps.argumentStyle));
    },

    instances: (caller) =>
      guard('instances', caller, async () => {
        let list: Instance[];
        try {
          list = await instancesFor(caller).refresh();
        } catch (err) {
          logger.warn({ ...errorFields(err) }, 'listing instances failed');
          return reply(false, 'Instances', [`Couldn't list the instances: ${describeAgentProblem(err)}.`]);
        }
        if (list.length === 0) return reply(true, 'Instances', ['The account has no agent instances yet.']);
        return reply(
          true,
          'Instances',
          [`${list.length} instance${list.length === 1 ? '' : 's'}. Bind one here with \`${commandName} bind <instance-id>\`.`],
          { columns: ['ID', 'Name', 'Status', 'Type'], rows: list.map((i) => [i.id, i.name, i.status, i.type]) },
        );
      }),

    bind: (caller, instanceId, mode) => guard('bind', caller, () => bindingCommands.bind(caller, instanceId, mode)),
    unbind: (caller) => guard('unbind', caller, () => bindingCommands.unbind(caller)),
    set: (caller, setting, value) =>
      guard('set', caller, () => (setting === 'prompts' ? native.setPrompts(caller, value) : bindingCommands.set(caller, setting, value))),
    feedback: (caller) => guard('feedback', caller, () => native.feedback(caller)),
    status: (caller) => guard('status', caller, () => reports.status(caller)),
    why: (caller) => guard('why', caller, () => reports.why(caller)),
    audit: (caller) => guard('audit', caller, () => reports.audit(caller)),

    async credential(caller, instanceId, key, value) {
      try {
        return await credential(caller, instanceId, key, value);
      } catch {
        // The handler catches everything itself; this only guards against a bug, and logs
        // nothing from the error since it might carry the value.
        const ref = newReference();
        logger.error({ ref, command: 'credential' }, 'command failed');
        return reply(false, 'Something went wrong', [sentence(`adding the credential failed unexpectedly (reference ${code(ref)})`)]);
      }
    },

    async credentialForm(caller) {
      try {
        return await credentialForm(caller);
      } catch (err) {
        // The submission meets the same problem and says so; the check must not block the form.
        logger.warn({ ...errorFields(err), platform: caller.platform }, 'could not check for a dashboard session; opening the credential form');
        return undefined;
      }
    },

    setup: (caller, apiKey, sessionToken) => setup(caller, apiKey, sessionToken),
    // The deployment's AGENT_ACCOUNT_MODE: the composition root passes `accounts` in both modes.
    accountMode: deps.accounts?.mode ?? 'shared',

    async refuse(caller, command) {
      await audit(caller, { action: 'refused', outcome: 'refused', detail: command });
      logger.info({ userId: caller.userId, platform: caller.platform, command }, 'refused a command from a non-admin');
      return reply(false, 'Not allowed', [`Only admins can use ${commandName} ${command}.`]);
    },

    cachedInstances: (caller) => scopeOf(caller).instances.get(),
  };
}

function redactReply(r: CommandReply, redact: (text: string) => string): CommandReply {
  return {
    ...r,
    title: redact(r.title),
    lines: r.lines.map(redact),
    ...(r.table ? { table: { columns: r.table.columns.map(redact), rows: r.table.rows.map((row) => row.map(redact)) } } : {}),
  };
}
