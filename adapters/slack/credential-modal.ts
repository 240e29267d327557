import type { App } from '@slack/bolt';
import { scrub as scrubSecrets } from '../../src/core/scrub.js';
import { withTimeout } from '../../src/core/with-timeout.js';
import type { View, WebClient } from '@slack/web-api';
import type { CommandReply, Commands } from '../../src/commands/types.js';
import { CREDENTIAL_REDACT_FOR_MS, scrubbedErrorFields } from '../../src/commands/credential.js';
import type { Logger, SecretRegistry } from '../../src/logger.js';
import { commandReplyMessage } from './blocks.js';
import { slackCaller, submittedIn } from './caller.js';
import { CHECK_AGAIN, submitterRights, type FormAdminCheck } from './admin.js';
import { escapeSlackText } from './escape.js';
import { slackErrorCode } from './errors.js';
import { formModal, INPUT_ACTION, messageView, registerMessageView } from './modal-views.js';
import type { ViewClaims } from './view-claims.js';

export const CREDENTIAL_CALLBACK_ID = 'agent_bridge_credential';
export const KEY_BLOCK = 'credential_key';
export const VALUE_BLOCK = 'credential_value';
export { INPUT_ACTION };

/** Slack's limit on private_metadata. */
const MAX_METADATA = 3_000;
/** Time left for the service inside Slack's 3 s: past it the modal says "saving" and is updated later. */
const ACK_BUDGET_MS = 2_300;

/** Kept in the modal between opening and submitting: never the value. */
interface Metadata {
  /** Instance ID. */
  i: string;
  /** Channel the command ran in (for the ephemeral confirmation). */
  c: string;
}

export function credentialMetadata(instanceId: string, channelId: string): string | undefined {
  const meta = JSON.stringify({ i: instanceId, c: channelId } satisfies Metadata);
  return meta.length <= MAX_METADATA ? meta : undefined;
}

function parseMetadata(raw: unknown): Metadata | undefined {
  try {
    const m = JSON.parse(String(raw)) as Partial<Metadata>;
    return typeof m.i === 'string' && typeof m.c === 'string' && m.i && m.c ? { i: m.i, c: m.c } : undefined;
  } catch {
    return undefined;
  }
}

/** The form: a key and a secret value, for one instance. */
export function credentialModal(instanceId: string, metadata: string): View {
  return formModal({
    callbackId: CREDENTIAL_CALLBACK_ID,
    metadata,
    title: 'Add a credential',
    intro: `Adds a credential to instance \`${escapeSlackText(instanceId.replace(/`/g, "'"))}\`. The value goes straight to the agent service: the bridge does not store it and will not show it again.`,
    inputs: [
      { blockId: KEY_BLOCK, label: 'Key', hint: 'The name the agent knows the secret by, for example OPENAI_API_KEY.', maxLength: 128, placeholder: 'OPENAI_API_KEY' },
      { blockId: VALUE_BLOCK, label: 'Secret value', maxLength: 3000 },
    ],
  });
}

function infoView(title: string, reply: CommandReply | string): View {
  return messageView(CREDENTIAL_CALLBACK_ID, title, typeof reply === 'string' ? reply : [reply.title, ...reply.lines].join('\n'));
}

export interface CredentialModalDeps {
  commands: Commands;
  secrets: SecretRegistry;
  logger: Logger;
  /** Asked afresh on every submission (`fresh`): an admin demoted since the form opened is refused. */
  isAdmin: FormAdminCheck;
  commandName: string;
  /** @defaultValue 2300 */
  ackBudgetMs?: number;
  /** Each view's submission acted on once (`adapters/slack/view-claims.ts`); absent: every delivery is. */
  claims?: ViewClaims;
}

/**
 * The submission: the service is called at once (never through the queue, so the value
 * never touches Redis). Problems are shown in the modal; success closes it and confirms
 * ephemerally with the key's name. The value is registered with the logger's secret
 * registry before anything else happens.
 */
export function registerCredentialModal(app: App, deps: CredentialModalDeps): void {
  registerMessageView(app, CREDENTIAL_CALLBACK_ID);
  app.view({ callback_id: CREDENTIAL_CALLBACK_ID, type: 'view_submission' }, async ({ ack, body, view, client }) => {
    const startedAt = Date.now();
    const values = (view.state?.values ?? {}) as Record<string, Record<string, { value?: string | null }>>;
    // Trimmed as on Discord: spaces pasted around a key are not part of it, and the trimmed
    // value is the one the service will quote back (and so the one to redact).
    const value = String(values[VALUE_BLOCK]?.[INPUT_ACTION]?.value ?? '').trim();
    const release = deps.secrets.add(value);
    setTimeout(release, CREDENTIAL_REDACT_FOR_MS).unref();
    const scrub = (text: string) => (value.length >= 4 ? scrubSecrets(text, [value]) : text);
    const fieldError = (block: string, text: string) =>
      ack({ response_action: 'errors', errors: { [block]: scrub(text).replace(/`/g, '').slice(0, 300) } });

    const key = String(values[KEY_BLOCK]?.[INPUT_ACTION]?.value ?? '').trim();
    const meta = parseMetadata(view.private_metadata);
    if (!meta) return fieldError(KEY_BLOCK, `This form is out of date: run ${deps.commandName} credential again.`);
    if (!key) return fieldError(KEY_BLOCK, 'Enter the key name.');
    if (!value) return fieldError(VALUE_BLOCK, 'Enter the secret value.');

    const user = body.user as Partial<typeof body.user> | undefined;
    if (!user || typeof user.id !== 'string' || !user.id) return fieldError(KEY_BLOCK, 'This form could not be read: run the command again.');
    const caller = slackCaller({ teamId: body.team?.id ?? user.team_id, channelId: meta.c, userId: user.id, userName: typeof user.name === 'string' ? user.name : undefined });
    const rights = await submitterRights(deps.isAdmin, user.id, submittedIn(body));
    if (rights === 'unknown') return fieldError(KEY_BLOCK, CHECK_AGAIN);
    if (rights !== 'admin') {
      const refusal = await deps.commands.refuse(caller, 'credential');
      return fieldError(KEY_BLOCK, [refusal.title, ...refusal.lines].join(' '));
    }

    const viewId = String(body.view?.id ?? '');
    if (deps.claims && !(await deps.claims.claim(viewId))) {
      deps.logger.info({ viewId }, 'credential form delivered again; already sent, not sending it twice');
      return ack({ response_action: 'update', view: infoView('Already sent', 'This form was already sent to the agent service; its answer follows here or in this channel.') });
    }
    const pending = deps.commands
      .credential(caller, meta.i, key, value)
      .catch((err: unknown): CommandReply => {
        deps.logger.error(scrubbedErrorFields(err, scrub), 'credential command failed');
        return { ok: false, title: 'Credential not added', lines: ['That did not work. Try again in a moment.'] };
      })
      .then(async (reply) => {
        // Not added: the same form may be corrected and sent again.
        if (!reply.ok) await deps.claims?.release(viewId);
        return reply;
      });
    const budget = Math.max(0, (deps.ackBudgetMs ?? ACK_BUDGET_MS) - (Date.now() - startedAt));
    const early = await withTimeout(pending, budget, () => undefined);

    if (early) {
      if (!early.ok && early.wholeForm) {
        // Slack shows errors only next to an input: the form is replaced by the answer instead.
        return ack({ response_action: 'update', view: infoView('Not added', { ...early, title: scrub(early.title), lines: early.lines.map(scrub) }) });
      }
      if (!early.ok) return fieldError(KEY_BLOCK, [early.title, ...early.lines].join(': '));
      await ack({ response_action: 'clear' });
      return confirm(client, deps.logger, meta.c, user.id, early, scrub);
    }
    // The service is slow: keep the modal open as "saving" and update it when it answers.
    await ack({ response_action: 'update', view: infoView('Saving…', 'Sending the credential to the agent service…') });
    const reply = await pending;
    const safeReply = { ...reply, title: scrub(reply.title), lines: reply.lines.map(scrub) };
    await client.views
      .update({ view_id: body.view.id, view: infoView(reply.ok ? 'Credential added' : 'Not added', safeReply) })
      .catch((err: Error) => deps.logger.warn({ code: slackErrorCode(err) }, 'could not update the credential modal'));
    if (reply.ok) await confirm(client, deps.logger, meta.c, user.id, safeReply, scrub);
  });
}

/** Ephemeral confirmation in the channel the command came from; a DM from the bot if that fails. */
async function confirm(client: WebClient, logger: Logger, channel: string, user: string, reply: CommandReply, scrub: (t: string) => string) {
  const message = commandReplyMessage({ ...reply, title: scrub(reply.title), lines: reply.lines.map(scrub) });
  try {
    await client.chat.postEphemeral({ channel, user, ...message });
  } catch (err) {
    logger.info({ code: slackErrorCode(err) }, 'ephemeral confirmation failed; sending it as a DM');
    await client.chat.postMessage({ channel: user, ...message }).catch(() => undefined);
  }
}
