import type { AgentApi } from '../agent-api/types.js';
import { describeAgentProblem } from '../agent-api/problem-words.js';
import { newReference } from '../core/reference.js';
import { NO_SESSION_CODE, NO_SESSION_MESSAGE } from '../agent-api/client.js';
import { scrub as scrubSecrets } from '../core/scrub.js';
import { BridgeError } from '../core/errors.js';
import { errorFields } from '../logger.js';
import { sentence } from './agent-errors.js';
import { code, reply } from './format.js';
import { looksLikeSecret } from './credential-key.js';
import type { CommandsDeps } from './options.js';
import type { CommandCaller, CommandReply } from './types.js';

/** Names a credential may have: a letter, then letters, digits, `_`, `.` or `-`; 128 at most. */
export const CREDENTIAL_KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;

const TITLE = 'Add a credential';

/**
 * How long a platform keeps a submitted credential value registered for redaction after its
 * request. The agent service may quote it later (a refusal such as "instance stopped:
 * OPENAI_API_KEY=..."), and this process's log lines and errors must still recognise it.
 * Answers, which any worker posts, are redacted by its fingerprint for far longer
 * (src/crypto/credential-fingerprints.ts).
 */
export const CREDENTIAL_REDACT_FOR_MS = 10 * 60_000;

/**
 * Removes every form the value may take inside a text (raw, JSON-escaped, URL-encoded). A value
 * shorter than 4 characters is not looked for: it would blank ordinary words (the logger's rule).
 */
function scrubber(value: string): (text: string) => string {
  if (value.length < 4) return (text) => text;
  return (text) => scrubSecrets(text, [value]);
}

/**
 * `credential`: checks the key name, calls the agent service at once, and confirms with the
 * key's name. The value never reaches a reply, the audit log or a log line: it is registered
 * with the logger's secret registry while the call runs, and scrubbed from every error text.
 * Its fingerprint (never the value) is recorded first, so answers quoting it are redacted.
 */
export function createCredentialHandler(deps: CommandsDeps, agentFor: (caller: CommandCaller) => AgentApi) {
  const { audit, logger, commandName } = deps;

  return async function credential(caller: CommandCaller, instanceId: string, key: string, value: string): Promise<CommandReply> {
    const release = deps.secrets.add(value);
    const scrub = scrubber(String(value ?? ''));
    const id = String(instanceId ?? '').trim();
    const name = String(key ?? '').trim();
    const base = {
      action: 'credential' as const,
      actor: caller.userId,
      actorName: caller.userName,
      platform: caller.platform,
      workspaceId: caller.workspaceId,
      channelId: caller.channelId,
    };
    const record = async (entry: { instanceId?: string; key?: string; outcome: 'ok' | 'failed'; detail?: string }) => {
      try {
        await audit.record({ ...base, ...entry, ...(entry.detail ? { detail: scrub(entry.detail) } : {}), at: deps.now() });
      } catch (err) {
        logger.error({ ...scrubbedErrorFields(err, scrub), action: 'credential' }, 'could not write the audit entry');
      }
    };

    try {
      if (!id) return reply(false, TITLE, [`Name the instance: \`${commandName} credential <instance-id>\`.`]);
      // An invalid key is not echoed: it may be the value pasted into the wrong field.
      if (!CREDENTIAL_KEY.test(name)) {
        await record({ instanceId: id, outcome: 'failed', detail: 'invalid key name' });
        return reply(false, TITLE, [
          'That key name is not valid: it must start with a letter and use only letters, digits, `_`, `.` or `-` (at most 128 characters), for example `OPENAI_API_KEY`.',
        ]);
      }
      if (typeof value !== 'string' || value.length === 0 || value.trim().length === 0) {
        await record({ instanceId: id, key: name, outcome: 'failed', detail: 'empty value' });
        return reply(false, TITLE, ['The credential value is empty. Enter the secret value and try again.']);
      }
      // Neither is recorded as the key: it is shown to every admin in the audit log.
      if (name === value.trim()) {
        await record({ instanceId: id, outcome: 'failed', detail: 'key equal to the value' });
        return reply(false, TITLE, [
          'The key and the value are the same. The key is the name the agent knows the secret by, for example `OPENAI_API_KEY`; the secret goes in the value field. Nothing was sent.',
        ]);
      }
      if (looksLikeSecret(name)) {
        await record({ instanceId: id, outcome: 'failed', detail: 'key name looks like a secret' });
        return reply(false, TITLE, [
          'That key name looks like a secret (a token, not a name). Put the name the agent knows the secret by in the Key field, for example `OPENAI_API_KEY`, and the secret in the value field. Nothing was sent or stored.',
        ]);
      }

      // Before the value leaves: the agent will have it, and may quote it in any later answer,
      // which a worker in another process (or after a restart) posts. A value that cannot be
      // recognised there is not sent.
      try {
        // Trimmed: spaces around a pasted value are not what the agent will quote.
        await deps.credentialFingerprints?.add(value.trim());
      } catch (err) {
        logger.warn({ ...scrubbedErrorFields(err, scrub), action: 'credential', instanceId: id, key: name }, 'could not record the credential fingerprint; not sent');
        await record({ instanceId: id, key: name, outcome: 'failed', detail: 'fingerprint not recorded (Redis)' });
        return reply(false, TITLE, [
          'The bridge could not record what it needs to hide this value in answers (Redis did not answer), so it was not sent. Try again in a moment.',
        ]);
      }

      let problem: string;
      let sessionRefused = false;
      try {
        const result = await agentFor(caller).addCredential(id, name, value);
        if (result.success) {
          await record({ instanceId: id, key: name, outcome: 'ok' });
          logger.info({ action: 'credential', instanceId: id, key: name, userId: caller.userId }, 'credential added');
          return reply(true, 'Credential added', [`Added credential ${code(name, 130)} to instance ${code(id)}.`]);
        }
        problem = 'The agent service did not confirm that the credential was added.';
      } catch (err) {
        problem = describeCredentialError(err, id, commandName);
        sessionRefused = isSessionProblem(err);
        const ref = newReference();
        logger.warn(
          { ref, action: 'credential', instanceId: id, key: name, kind: err instanceof BridgeError ? err.kind : undefined, status: err instanceof BridgeError ? err.status : undefined, reason: scrub(problem) },
          'adding a credential failed',
        );
      }
      const safe = scrub(problem);
      await record({ instanceId: id, key: name, outcome: 'failed', detail: safe.slice(0, 300) });
      // The session is the operator's, not what the admin typed: not shown on the Key field.
      return sessionRefused ? { ...reply(false, TITLE, [safe]), wholeForm: true } : reply(false, TITLE, [safe]);
    } finally {
      release();
    }
  };
}

/**
 * Before the form opens: a deployment (or, per-workspace, a workspace's account) with no dashboard
 * session can never add a credential, so the admin is told at once, in words naming who must act,
 * instead of after typing the secret. Undefined: open the form. A session that is set but
 * refused is only found when the form is sent.
 */
export function createCredentialFormCheck(deps: CommandsDeps, agentFor: (caller: CommandCaller) => AgentApi) {
  const { commandName } = deps;
  return async function credentialForm(caller: CommandCaller): Promise<CommandReply | undefined> {
    if (deps.accounts?.mode === 'per-workspace') {
      const account = await deps.accounts.forWorkspace(caller.platform, caller.workspaceId);
      if (!account) {
        return reply(false, TITLE, [
          `This ${deps.workspaceNoun} has no agent account yet. Run \`${commandName} setup\` first (with a dashboard session, which adding credentials needs).`,
        ]);
      }
      if ((await account.hasSession?.()) === false) {
        return reply(false, TITLE, [
          `Adding credentials needs a dashboard session, and this ${deps.workspaceNoun}'s agent account has none. Run \`${commandName} setup\` again and fill in the dashboard session as well as the API key.`,
        ]);
      }
      return undefined;
    }
    if ((await agentFor(caller).hasSession?.()) === false) {
      return reply(false, TITLE, [
        'Adding credentials needs a dashboard session, and this bridge has none configured. Whoever runs the bridge must set AGENT_SESSION_COOKIE (or AGENT_SESSION_TOKEN) and restart it; nothing was asked or sent.',
      ]);
    }
    return undefined;
  };
}

/**
 * The logger's `errorFields`, with the message scrubbed of the credential's value: the value is
 * also in the logger's secret registry while it is handled, but an error must not depend on that.
 */
export function scrubbedErrorFields(err: unknown, scrub: (text: string) => string): ReturnType<typeof errorFields> {
  const fields = errorFields(err);
  return { err: { ...fields.err, message: scrub(String(fields.err.message)) } };
}

/** The service had no session to check, or refused the one it was given. */
function isSessionProblem(err: unknown): boolean {
  return err instanceof BridgeError && (err.code === NO_SESSION_CODE || err.kind === 'unauthorized' || err.kind === 'forbidden');
}

/** The missing-session, unknown-instance and refusal cases in words an admin can act on. */
function describeCredentialError(err: unknown, instanceId: string, commandName: string): string {
  if (err instanceof BridgeError && err.code === NO_SESSION_CODE) {
    // The client's own words (the issue's), then who must act.
    return `${NO_SESSION_MESSAGE} (or AGENT_SESSION_TOKEN) where the bridge runs.`;
  }
  if (err instanceof BridgeError && (err.kind === 'not_found' || err.status === 404)) {
    return `No instance with ID ${code(instanceId)}. Run ${commandName} instances to see them.`;
  }
  if (err instanceof BridgeError && (err.kind === 'unauthorized' || err.kind === 'forbidden')) {
    return `The agent service refused the dashboard session (it may have expired): ${err.message}`;
  }
  if (err instanceof BridgeError && ['timeout', 'network', 'server_error'].includes(err.kind)) {
    return `${sentence(describeAgentProblem(err)).slice(0, -1)}. The credential may or may not have been added: check the instance before trying again.`;
  }
  if (err instanceof BridgeError && err.kind !== 'rate_limited' && err.kind !== 'invalid_response') {
    return `The agent service refused: ${err.message}`;
  }
  return sentence(describeAgentProblem(err));
}
