import type { App, RespondFn, SlashCommand } from '@slack/bolt';
import { errorFields } from '../../src/logger.js';
import { newReference } from '../../src/core/reference.js';
import type { WebClient } from '@slack/web-api';
import { runPlainCommand } from '../../src/commands/dispatch.js';
import { parseCommandText } from '../../src/commands/parse.js';
import { findCommand } from '../../src/commands/registry.js';
import { code as codeSpan } from '../../src/commands/format.js';
import type { CommandCaller, CommandReply, Commands, ParsedCommand } from '../../src/commands/types.js';
import type { Logger } from '../../src/logger.js';
import { ephemeral } from './blocks.js';
import { slackCaller } from './caller.js';
import { credentialMetadata, credentialModal } from './credential-modal.js';
import { setupModal } from './setup-modal.js';
import { slackErrorCode } from './errors.js';
import { shortcutReach } from './shortcut-reach.js';
import type { AdminPlace, AdminRights } from './admin.js';

export interface SlashCommandDeps {
  commands: Commands;
  logger: Logger;
  /** With `rights` (adapters/slack/admin.ts), a check Slack would not answer is told apart. */
  isAdmin: ((userId: string, place?: AdminPlace) => Promise<boolean>) & { rights?(userId: string, place?: AdminPlace): Promise<AdminRights> };
  /** SLACK_COMMAND, e.g. `/agent`. */
  commandName: string;
}

/** The slash command's payload as the handler needs it; a missing field reads as empty. */
function callerOf(command: Partial<SlashCommand>): CommandCaller {
  return slackCaller({
    teamId: String(command.team_id ?? ''),
    channelId: String(command.channel_id ?? ''),
    channelName: typeof command.channel_name === 'string' ? command.channel_name : undefined,
    userId: String(command.user_id ?? ''),
    userName: typeof command.user_name === 'string' ? command.user_name : undefined,
  });
}

/** The text as typed: Slack sends `&`, `<` and `>` as `&amp;`, `&lt;` and `&gt;` (a prompt titled "Q&A"). */
function commandText(command: Partial<SlashCommand>): string {
  const text = typeof command.text === 'string' ? command.text : '';
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function problem(title: string, line: string): CommandReply {
  return { ok: false, title, lines: [line] };
}

/**
 * `/agent …`: acknowledged at once (Slack allows 3 s), then answered ephemerally through the
 * response URL. Who may run what comes from the command table (`admin`); a bare command gets
 * help, an unknown one an error and help.
 */
export function registerSlashCommand(app: App, deps: SlashCommandDeps): void {
  // Another command routed to this app (the manifest and SLACK_COMMAND differ): say so, and ack.
  const other = new RegExp(`^(?!${deps.commandName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$)`);
  app.command(other, async ({ command, ack }) => {
    deps.logger.warn({ command: String(command.command).slice(0, 40) }, `a slash command other than ${deps.commandName} reached the bridge: make SLACK_COMMAND match the manifest`);
    await ack({ response_type: 'ephemeral', text: `This app answers ${deps.commandName}. Ask the operator to make SLACK_COMMAND match the app's slash command.` });
  });

  app.command(deps.commandName, async ({ command, ack, respond, client }) => {
    await ack();
    const caller = callerOf(command);
    const parsed = parseCommandText(commandText(command));
    try {
      const answer = await run(parsed, caller, command, client, deps);
      if (answer) await respond(ephemeral(answer));
    } catch (err) {
      const ref = newReference();
      deps.logger.error({ ref, command: parsed.name, ...errorFields(err) }, 'Slack command failed');
      await safeRespond(respond, problem('Something went wrong', `That did not work. If it keeps failing, give your operator the reference \`${ref}\`.`));
    }
  });
}

async function safeRespond(respond: RespondFn, reply: CommandReply) {
  await respond(ephemeral(reply)).catch(() => undefined);
}

/** Where the command was run: admin flags count only for a member of this workspace (or Grid organisation). */
function placeOf(command: Partial<SlashCommand>): AdminPlace {
  const teamId = typeof command.team_id === 'string' && command.team_id ? command.team_id : undefined;
  const enterpriseId = typeof command.enterprise_id === 'string' && command.enterprise_id ? command.enterprise_id : undefined;
  return { ...(teamId ? { teamId } : {}), ...(enterpriseId ? { enterpriseId } : {}) };
}

async function rightsOf(caller: CommandCaller, command: Partial<SlashCommand>, deps: SlashCommandDeps): Promise<AdminRights> {
  if (!caller.userId) return 'not_admin';
  if (deps.isAdmin.rights) return deps.isAdmin.rights(caller.userId, placeOf(command));
  return (await deps.isAdmin(caller.userId, placeOf(command))) ? 'admin' : 'not_admin';
}

/** Slack would not say (429, down): still refused, but not as a non-admin, and not audited as one. */
function cannotCheckAdmin(deps: SlashCommandDeps, command: string): CommandReply {
  deps.logger.info({ command }, 'Slack did not let the bridge check admin rights; asked the user to try again');
  return problem('Not allowed just now', `Slack didn't let me check your admin rights just now, so I can't run \`${deps.commandName} ${command}\`. Please try again in a moment.`);
}

async function run(
  parsed: ParsedCommand,
  caller: CommandCaller,
  command: Partial<SlashCommand>,
  client: WebClient,
  deps: SlashCommandDeps,
): Promise<CommandReply | undefined> {
  const c = deps.commands;
  if (parsed.name === 'invalid') {
    // Someone who may not run the admin command they tried hears that, not its usage.
    const tried = findCommand(commandText(command).trim().split(/\s+/)[0] ?? '');
    if (tried && tried.admin !== false) {
      const rights = await rightsOf(caller, command, deps);
      if (rights !== 'admin') return rights === 'unknown' ? cannotCheckAdmin(deps, tried.name) : c.refuse(caller, tried.name);
    }
    const help = c.help();
    return { ...help, ok: false, lines: [parsed.error, '', ...help.lines] };
  }
  if (findCommand(parsed.name)?.admin !== false) {
    const rights = await rightsOf(caller, command, deps);
    if (rights !== 'admin') return rights === 'unknown' ? cannotCheckAdmin(deps, parsed.name) : c.refuse(caller, parsed.name);
  }
  if (parsed.name === 'credential') return (await c.credentialForm?.(caller)) ?? openCredentialModal(parsed.instanceId, command, client, deps);
  if (parsed.name === 'setup') return c.accountMode === 'per-workspace' ? openSetupModal(command, client, deps) : c.setup(caller, '');
  const answer = await runPlainCommand(c, caller, parsed);
  if (parsed.name === 'bind' && answer.ok && !caller.channelId.startsWith('dm:')) return withReach(answer, client, String(command.channel_id ?? ''), caller.userId);
  return answer;
}

/**
 * Slack delivers `/agent` in a channel the bot is not in (a private one it cannot even see):
 * the binding is kept, but nothing there reaches the bot and it cannot post, so the admin is
 * told to invite it. When Slack does not say (rate limited, a missing scope), nothing is added.
 */
async function withReach(answer: CommandReply, client: WebClient, channel: string, userId: string): Promise<CommandReply> {
  if (!channel || (await shortcutReach(client, channel, userId)) !== 'no') return answer;
  return {
    ...answer,
    lines: [
      ...answer.lines,
      "But I'm not a member of this channel, so I can neither read nor answer messages here. Invite me with `/invite @<my name>`; the binding works once I'm in.",
    ],
  };
}

async function openSetupModal(command: Partial<SlashCommand>, client: WebClient, deps: SlashCommandDeps) {
  try {
    await client.views.open({ trigger_id: String(command.trigger_id ?? ''), view: setupModal(String(command.channel_id ?? '')) });
    return undefined;
  } catch (err) {
    deps.logger.warn({ code: slackErrorCode(err) }, 'could not open the setup form');
    return problem('Agent account', `The form could not be opened. Run \`${deps.commandName} setup\` again.`);
  }
}

async function openCredentialModal(instanceId: string, command: Partial<SlashCommand>, client: WebClient, deps: SlashCommandDeps) {
  const metadata = credentialMetadata(instanceId, String(command.channel_id ?? ''));
  if (!metadata) return problem('Add a credential', 'That instance ID is too long.');
  try {
    await client.views.open({ trigger_id: String(command.trigger_id ?? ''), view: credentialModal(instanceId, metadata) });
    return undefined;
  } catch (err) {
    const code = slackErrorCode(err);
    deps.logger.warn({ code }, 'could not open the credential form');
    if (code === 'expired_trigger_id' || code === 'exchanged_trigger_id' || code === 'invalid_trigger_id') {
      // Slack allows 3 s from the command to the form; a slow check on the way used them up.
      return problem('Add a credential', `Slack closed the window for opening the form (3 seconds). Run ${codeSpan(`${deps.commandName} credential ${instanceId}`, 120)} again.`);
    }
    return problem('Add a credential', 'The form could not be opened. Try again in a moment.');
  }
}
