import { BridgeError } from '../core/errors.js';
import { describeAgentProblem } from '../agent-api/problem-words.js';
import { newReference } from '../core/reference.js';
import { sentence } from './agent-errors.js';
import type { AuditWriter } from './binding-commands.js';
import { code, reply } from './format.js';
import { schemeBefore, wrappedInQuotes } from '../config/pasted-secret.js';
import type { CommandsDeps } from './options.js';
import type { CommandCaller, CommandReply } from './types.js';

const TITLE = 'Agent account';
/** The service's keys and sessions are tokens, never this long; a longer paste is something else. */
const MAX_SECRET = 4_096;

/**
 * `setup`: a workspace's own agent-service account (AGENT_ACCOUNT_MODE=per-workspace). The key
 * is checked with a listing before it is stored, sealed; neither value reaches a reply, the
 * audit log or a log line (both are registered with the logger's redaction at once).
 * `forget` drops the commands' cached listing of that workspace.
 */
export function createSetupHandler(deps: CommandsDeps, audit: AuditWriter, forget: (caller: CommandCaller) => void) {
  const { logger, commandName } = deps;

  return async function setup(caller: CommandCaller, apiKey: string, sessionToken?: string): Promise<CommandReply> {
    const key = String(apiKey ?? '').trim();
    const session = String(sessionToken ?? '').trim();
    const releases = [deps.secrets.add(key), deps.secrets.add(session)];
    try {
      if (deps.accounts?.mode !== 'per-workspace') {
        return reply(false, TITLE, [
          'This bridge uses one agent-service account for every workspace, set by whoever runs it (AGENT_ACCOUNT_MODE=shared): there is nothing to set up here.',
        ]);
      }
      // Checked before the service is asked: its 401 would only say the key was not accepted.
      const pasted = wrappedInQuotes(key) ? 'was pasted with quotes around it' : schemeBefore(key) ? `starts with "${schemeBefore(key)} "` : undefined;
      if (pasted) {
        await audit(caller, { action: 'setup', outcome: 'failed', detail: 'API key pasted with quotes or a scheme' });
        return reply(false, TITLE, [`That API key ${pasted}: paste the key alone, as the agent service dashboard shows it. Nothing was saved.`]);
      }
      if (wrappedInQuotes(session)) {
        await audit(caller, { action: 'setup', outcome: 'failed', detail: 'session pasted with quotes' });
        return reply(false, TITLE, ['That dashboard session was pasted with quotes around it: paste the session token alone, or leave it empty. Nothing was saved.']);
      }
      if (!key || key.length > MAX_SECRET || /\s/.test(key)) {
        await audit(caller, { action: 'setup', outcome: 'failed', detail: 'invalid API key' });
        return reply(false, TITLE, ['That API key is not valid: paste the key from the agent service dashboard, with no spaces.']);
      }
      if (session.length > MAX_SECRET || /\s/.test(session)) {
        await audit(caller, { action: 'setup', outcome: 'failed', detail: 'invalid session' });
        return reply(false, TITLE, ['That dashboard session is not valid: paste the session token on its own, or leave it empty.']);
      }
      try {
        const instances = await deps.accounts.setUp(caller.platform, caller.workspaceId, { apiKey: key, ...(session ? { sessionToken: session } : {}) });
        forget(caller);
        await audit(caller, { action: 'setup', outcome: 'ok', detail: session ? 'API key and dashboard session' : 'API key' });
        logger.info({ action: 'setup', platform: caller.platform, workspaceId: caller.workspaceId, userId: caller.userId }, 'agent account set up');
        return reply(true, TITLE, [
          `Saved. This workspace's messages now go to its own agent account (${instances.length} instance${instances.length === 1 ? '' : 's'}). The key is stored encrypted and will not be shown again.`,
          session ? `Credentials can be added with \`${commandName} credential <instance-id>\`.` : `To add credentials to instances, run \`${commandName} setup\` again with a dashboard session.`,
          `Next: \`${commandName} instances\`, then \`${commandName} bind <instance-id>\` in a channel.`,
        ]);
      } catch (err) {
        const unauthorized = err instanceof BridgeError && (err.kind === 'unauthorized' || err.kind === 'forbidden');
        const problem = unauthorized ? 'the agent service did not accept that API key' : describeAgentProblem(err);
        const ref = newReference();
        logger.warn({ ref, action: 'setup', platform: caller.platform, workspaceId: caller.workspaceId, kind: err instanceof BridgeError ? err.kind : undefined }, 'agent account setup failed');
        await audit(caller, { action: 'setup', outcome: 'failed', detail: problem });
        return reply(false, TITLE, [sentence(`${problem}; nothing was saved (reference ${code(ref)})`)]);
      }
    } finally {
      for (const release of releases) release();
    }
  };
}
