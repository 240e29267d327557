import type { App } from '@slack/bolt';
import type { View, WebClient } from '@slack/web-api';
import type { CommandReply, Commands } from '../../src/commands/types.js';
import type { Logger, SecretRegistry } from '../../src/logger.js';
import { slackCaller, submittedIn } from './caller.js';
import { CHECK_AGAIN, submitterRights, type FormAdminCheck } from './admin.js';
import { slackErrorCode } from './errors.js';
import { formModal, INPUT_ACTION, messageView, registerMessageView } from './modal-views.js';

export const SETUP_CALLBACK_ID = 'agent_bridge_setup';
export const API_KEY_BLOCK = 'setup_api_key';
export const SESSION_BLOCK = 'setup_session';
/** How long submitted values stay registered for log redaction after the request (the store adds them for good). */
const REDACT_FOR_MS = 10 * 60_000;

/** The form: this workspace's agent API key and an optional dashboard session. `channelId` is kept for the confirmation. */
export function setupModal(channelId: string): View {
  return formModal({
    callbackId: SETUP_CALLBACK_ID,
    metadata: channelId.slice(0, 200),
    title: 'Agent account',
    intro: "This workspace's messages will go to the agent-service account of this key, and be billed to it. The key is checked, stored encrypted and never shown again.",
    inputs: [
      { blockId: API_KEY_BLOCK, label: 'API key', hint: 'Generated in the agent service dashboard.', maxLength: 3000 },
      { blockId: SESSION_BLOCK, label: 'Dashboard session (optional)', hint: 'Needed only to add credentials to instances with the credential command.', optional: true, maxLength: 3000 },
    ],
  });
}

function resultView(reply: CommandReply): View {
  return messageView(SETUP_CALLBACK_ID, reply.ok ? 'Saved' : 'Not saved', [reply.title, ...reply.lines].join('\n'));
}

export interface SetupModalDeps {
  commands: Commands;
  secrets: SecretRegistry;
  logger: Logger;
  /** Asked afresh on every submission (`fresh`): an admin demoted since the form opened is refused. */
  isAdmin: FormAdminCheck;
}

/**
 * The submission: acked at once with "Checking…" (the key is verified with a listing, which
 * may take longer than Slack's 3 s), then the modal shows the outcome. Neither value is ever
 * in a view, a message or a log line.
 */
export function registerSetupModal(app: App, deps: SetupModalDeps): void {
  registerMessageView(app, SETUP_CALLBACK_ID);
  app.view({ callback_id: SETUP_CALLBACK_ID, type: 'view_submission' }, async ({ ack, body, view, client }) => {
    const values = (view.state?.values ?? {}) as Record<string, Record<string, { value?: string | null }>>;
    const apiKey = String(values[API_KEY_BLOCK]?.[INPUT_ACTION]?.value ?? '');
    const session = String(values[SESSION_BLOCK]?.[INPUT_ACTION]?.value ?? '');
    for (const value of [apiKey, session]) setTimeout(deps.secrets.add(value.trim()), REDACT_FOR_MS).unref();
    const user = body.user as Partial<typeof body.user> | undefined;
    if (!user || typeof user.id !== 'string' || !user.id) {
      return ack({ response_action: 'errors', errors: { [API_KEY_BLOCK]: 'This form could not be read: run the command again.' } });
    }
    if (!apiKey.trim()) return ack({ response_action: 'errors', errors: { [API_KEY_BLOCK]: 'Enter the API key.' } });
    const caller = slackCaller({ teamId: body.team?.id ?? user.team_id, channelId: String(view.private_metadata ?? ''), userId: user.id, userName: typeof user.name === 'string' ? user.name : undefined });
    const rights = await submitterRights(deps.isAdmin, user.id, submittedIn(body));
    if (rights === 'unknown') return ack({ response_action: 'errors', errors: { [API_KEY_BLOCK]: CHECK_AGAIN } });
    if (rights !== 'admin') {
      const refusal = await deps.commands.refuse(caller, 'setup');
      return ack({ response_action: 'errors', errors: { [API_KEY_BLOCK]: [refusal.title, ...refusal.lines].join(' ').slice(0, 300) } });
    }
    await ack({ response_action: 'update', view: resultView({ ok: true, title: 'Checking the key…', lines: ['Asking the agent service for this account’s instances.'] }) });
    const reply = await deps.commands.setup(caller, apiKey, session).catch((): CommandReply => ({ ok: false, title: 'Agent account', lines: ['That did not work. Try again in a moment.'] }));
    await updateView(client, body.view.id, resultView(reply), deps.logger);
  });
}

async function updateView(client: WebClient, viewId: string, view: View, logger: Logger) {
  await client.views.update({ view_id: viewId, view }).catch((err: Error) => logger.warn({ code: slackErrorCode(err) }, 'could not update the setup modal'));
}
