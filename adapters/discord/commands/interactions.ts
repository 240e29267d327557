import {
  MessageFlags,
  PermissionFlagsBits,
  type ChatInputCommandInteraction,
  type Interaction,
  type ModalSubmitInteraction,
  type RepliableInteraction,
} from 'discord.js';
import { errorFields, type Logger, type SecretRegistry } from '../../../src/logger.js';
import type { CommandReply, Commands } from '../../../src/commands/types.js';
import { runPlainCommand } from '../../../src/commands/dispatch.js';
import { CREDENTIAL_REDACT_FOR_MS } from '../../../src/commands/credential.js';
import { newReference } from '../../../src/core/reference.js';
import { withTimeout } from '../../../src/core/with-timeout.js';
import { DEFAULT_COMMAND, findCommand, parsedFrom, type CommandEntry } from '../../../src/commands/registry.js';
import { callerOf, installedInGuild, isAdmin } from './access.js';
import { respondInstances } from './autocomplete.js';
import { ASK_COMMAND_NAME, COMMAND_NAME } from './definition.js';
import { onAskAgent, type AskDeps } from './ask-agent.js';
import { onFeedbackClick, type FeedbackClickDeps } from '../feedback/click.js';
import {
  API_KEY_FIELD,
  KEY_FIELD,
  MAX_MODAL_INSTANCE_ID,
  SESSION_FIELD,
  SETUP_MODAL_ID,
  VALUE_FIELD,
  credentialModal,
  instanceFromModalId,
  setupModal,
} from './credential-modal.js';
import { renderCommandReply } from './render.js';
import { withMentionOnlyNote } from './mention-only-note.js';

export interface InteractionDeps {
  commands: Commands;
  secrets: Pick<SecretRegistry, 'add' | 'redact'>;
  logger: Logger;
  adminRoleIds: readonly string[];
  /** "Ask the agent" on a message; ignored when absent. */
  ask?: AskDeps;
  /** 👍/👎 clicks on replies; ignored when absent. */
  feedback?: FeedbackClickDeps;
  /** True while the bot runs without the Message Content intent (mention-only mode). */
  mentionOnly?: () => boolean;
}

const EPHEMERAL = MessageFlags.Ephemeral;
/** Discord's answer to a first response after its 3 seconds. */
const UNKNOWN_INTERACTION = 10062;
const TOO_LATE =
  'discord interaction answered too late: Discord takes the first answer within 3 seconds only, and the user read "The application did not respond". ' +
  'Was this process busy, or its gateway connection behind (an interaction replayed after a reconnect)?';
/** Discord's answer to an edit or follow-up after the interaction token's 15 minutes. */
const INVALID_WEBHOOK_TOKEN = 50027;
/**
 * Discord's answer to a second first answer. Every session of a shard gets its events, so while
 * two processes run the same shard (a deploy that starts the new one first) both receive each
 * interaction, and the slower one is told the other answered: nothing to do or to tell anyone.
 */
const ALREADY_ACKNOWLEDGED = 40060;
const TOKEN_EXPIRED =
  "discord interaction answered after its 15 minutes: the command's answer could not be shown (what it did is done; /agent audit lists admin actions). " +
  'Was Redis or the agent service that slow?';
/** How long the check before the credential form may take: Discord wants the modal within 3 s. */
const FORM_CHECK_MS = 2_000;
const NO_MENTIONS = { parse: [] as [] };

/** True (and logged) when `err` is Discord saying another session of the shard answered first. */
function answeredElsewhere(err: unknown, interaction: Interaction, logger: Logger): boolean {
  if ((err as { code?: unknown } | null)?.code !== ALREADY_ACKNOWLEDGED) return false;
  logger.info({ interactionId: interaction.id, type: interaction.type }, 'discord interaction already answered by another session of its shard (another agent-bridge process runs it too)');
  return true;
}

function problem(title: string, line: string): CommandReply {
  return { ok: false, title, lines: [line] };
}

/** Sends an answer privately: the first message as the (deferred) reply, the rest as follow-ups. */
async function answer(interaction: RepliableInteraction, reply: CommandReply, deps: InteractionDeps): Promise<void> {
  const [first, ...rest] = renderCommandReply(reply).map((text) => deps.secrets.redact(text));
  if (interaction.deferred || interaction.replied) {
    await interaction.editReply({ content: first ?? '', allowedMentions: NO_MENTIONS });
  } else {
    await interaction.reply({ content: first ?? '', flags: EPHEMERAL, allowedMentions: NO_MENTIONS });
  }
  for (const content of rest) await interaction.followUp({ content, flags: EPHEMERAL, allowedMentions: NO_MENTIONS });
}

/** An admin command run in a DM. Not audited: it names no server whose log it would go in. */
function notInAServer(): CommandReply {
  return problem(
    'Run it in a server',
    `\`/${COMMAND_NAME}\` works in a server channel, where it acts on that channel. Direct messages belong to no server: which instance answers them is set where the bridge runs, with \`BINDINGS=discord:dm=<instance-id>\`.`,
  );
}

/**
 * An admin command from the app added to a user's account, in a server that never invited the
 * bot. Not audited: that server is not one the bridge serves.
 */
function notInstalledHere(): CommandReply {
  return problem(
    'Not in this server',
    `agent-bridge isn't installed in this server: \`/${COMMAND_NAME}\` manages it only in servers that invited the bot. Ask this server's admins to invite it, then run the command there.`,
  );
}

/** Commands whose answer says "this channel": in a thread, that is its parent channel. */
const CHANNEL_COMMANDS: ReadonlySet<string> = new Set(['bind', 'unbind', 'set', 'status', 'why']);

/**
 * Run in a thread, a channel command acts on the parent channel, where bindings live, and so on
 * every thread in it: `bind … mode:all` there answers every message of the whole channel. The
 * answer names it, since "this channel" read in a thread means the thread.
 */
function withThreadNote(reply: CommandReply, command: string, i: ChatInputCommandInteraction): CommandReply {
  const channel = i.channel;
  if (!CHANNEL_COMMANDS.has(command) || !channel?.isThread() || !channel.parentId) return reply;
  return { ...reply, lines: [...reply.lines, `Run in a thread, this applies to its parent channel <#${channel.parentId}> and every thread in it.`] };
}

/**
 * After `bind` and in `status`: a channel where the bot may not post (a private channel its role
 * was not added to, an overwrite) is bound all the same, and then stays silent. Discord says what
 * the bot may do where the command ran in the interaction's `app_permissions`.
 */
function withPostingNote(reply: CommandReply, command: string, i: ChatInputCommandInteraction): CommandReply {
  if (command !== 'status' && !(command === 'bind' && reply.ok)) return reply;
  const p = i.appPermissions;
  const inThread = i.channel?.isThread() === true;
  const send = inThread ? PermissionFlagsBits.SendMessagesInThreads : PermissionFlagsBits.SendMessages;
  if (p.has(PermissionFlagsBits.ViewChannel) && p.has(send)) return reply;
  const needs = `View Channel and ${inThread ? 'Send Messages in Threads' : 'Send Messages'}`;
  return { ...reply, lines: [...reply.lines, `Note: I may not post in this channel, so nothing here will be answered until I'm given ${needs} here (channel settings → Permissions → add the bot's role).`] };
}

/** Capitalised command name, as the title of a problem with its options (`Bind`). */
function titleOf(entry: CommandEntry): string {
  return `${entry.name.charAt(0).toUpperCase()}${entry.name.slice(1)}`;
}

async function onCommand(i: ChatInputCommandInteraction, deps: InteractionDeps): Promise<void> {
  const sub = i.options.getSubcommand(false) ?? DEFAULT_COMMAND;
  const entry = findCommand(sub);
  // Aliases (`?`) are for typed text: Discord sends only the names it was given.
  if (!entry || entry.name !== sub) return answer(i, problem('Unknown command', 'Try `/agent help`.'), deps);
  const caller = callerOf(i);
  // A DM belongs to no server, so nobody is an admin there: say where the command works instead.
  if (entry.admin && !i.inGuild()) return answer(i, notInAServer(), deps);
  if (entry.admin && !installedInGuild(i)) return answer(i, notInstalledHere(), deps);
  if (entry.admin && !isAdmin(i, deps.adminRoleIds)) {
    await i.deferReply({ flags: EPHEMERAL });
    return answer(i, await deps.commands.refuse(caller, entry.name), deps);
  }
  const parsed = parsedFrom(entry, entry.readOptions?.((name) => (i.options.getString(name) ?? '').trim()) ?? {});
  if (parsed.name === 'invalid') return answer(i, problem(titleOf(entry), parsed.error), deps);
  if (parsed.name === 'credential') {
    if (parsed.instanceId.length > MAX_MODAL_INSTANCE_ID) {
      return answer(i, problem('Credential', `That instance ID is too long (at most ${MAX_MODAL_INSTANCE_ID} characters).`), deps);
    }
    // Without a dashboard session the form could never be sent: say so instead of opening it. The
    // check may read Redis (per-workspace accounts): one that does not answer in time opens the
    // form, since a modal must be Discord's first answer, within 3 s ("did not respond" after).
    const check = deps.commands.credentialForm?.(caller) ?? Promise.resolve(undefined);
    const cannot = await withTimeout(check, FORM_CHECK_MS, () => undefined);
    if (cannot) return answer(i, cannot, deps);
    // A modal must be the first answer: no deferring here.
    await i.showModal(credentialModal(parsed.instanceId));
    return;
  }
  if (parsed.name === 'setup') {
    if (deps.commands.accountMode === 'per-workspace') return void (await i.showModal(setupModal()));
    await i.deferReply({ flags: EPHEMERAL });
    return answer(i, await deps.commands.setup(caller, ''), deps);
  }
  // Commands anyone may run answer at once (help); the others may take a while.
  if (entry.admin) await i.deferReply({ flags: EPHEMERAL });
  const reply = await runPlainCommand(deps.commands, caller, parsed);
  const noted = withPostingNote(withThreadNote(withMentionOnlyNote(reply, parsed, deps.mentionOnly?.() === true), parsed.name, i), parsed.name, i);
  return answer(i, noted, deps);
}

/**
 * The credential goes to the service at once, never through the queue or Redis. While it is
 * handled the value is a registered secret, so no log line or answer can carry it.
 */
/** This server's agent account: checked and stored sealed by the shared handler; never echoed. */
async function onSetupSubmit(i: ModalSubmitInteraction, deps: InteractionDeps): Promise<void> {
  const field = (id: string) => {
    try {
      return i.fields.getTextInputValue(id).trim();
    } catch {
      return '';
    }
  };
  const apiKey = field(API_KEY_FIELD);
  const session = field(SESSION_FIELD);
  const releases = [deps.secrets.add(apiKey), deps.secrets.add(session)];
  try {
    await i.deferReply({ flags: EPHEMERAL });
    const caller = callerOf(i);
    if (!isAdmin(i, deps.adminRoleIds)) return await answer(i, await deps.commands.refuse(caller, 'setup'), deps);
    await answer(i, await deps.commands.setup(caller, apiKey, session), deps);
  } catch (err) {
    if (answeredElsewhere(err, i, deps.logger)) return;
    const ref = newReference();
    deps.logger.error({ ...errorFields(err), ref }, 'discord setup submit failed');
    await answer(i, problem('Agent account', `That did not work (reference \`${ref}\`). Try again in a moment.`), deps).catch(() => {});
  } finally {
    for (const release of releases) release();
  }
}

async function onCredentialSubmit(i: ModalSubmitInteraction, instanceId: string, deps: InteractionDeps): Promise<void> {
  const field = (id: string) => {
    try {
      return i.fields.getTextInputValue(id);
    } catch {
      return '';
    }
  };
  const value = field(VALUE_FIELD).trim();
  // Kept past the call (as on Slack): the agent service may quote the value in a later answer.
  setTimeout(deps.secrets.add(value), CREDENTIAL_REDACT_FOR_MS).unref();
  try {
    await i.deferReply({ flags: EPHEMERAL });
    const caller = callerOf(i);
    if (!isAdmin(i, deps.adminRoleIds)) return await answer(i, await deps.commands.refuse(caller, 'credential'), deps);
    const key = field(KEY_FIELD).trim();
    if (!key || !value) return await answer(i, problem('Credential not sent', 'Both the key and the value are needed.'), deps);
    await answer(i, await deps.commands.credential(caller, instanceId, key, value), deps);
  } catch (err) {
    if (answeredElsewhere(err, i, deps.logger)) return;
    // Logged here, while the value is still registered for redaction.
    const ref = newReference();
    deps.logger.error({ ...errorFields(err), ref, instanceId: instanceId.slice(0, 100) }, 'discord credential submit failed');
    const reply = problem('Credential not sent', `That did not work (reference \`${ref}\`). Try again in a moment.`);
    await answer(i, reply, deps).catch(() => {});
  }
}

/** One entry point for every interaction the gateway delivers. Never throws. */
export function createInteractionHandler(deps: InteractionDeps): (interaction: Interaction) => Promise<void> {
  return async (interaction) => {
    try {
      if (interaction.isAutocomplete()) {
        if (interaction.commandName !== COMMAND_NAME) return await interaction.respond([]);
        return await respondInstances(interaction, deps.commands, isAdmin(interaction, deps.adminRoleIds));
      }
      if (interaction.isChatInputCommand() && interaction.commandName === COMMAND_NAME) {
        return await onCommand(interaction, deps);
      }
      if (interaction.isMessageContextMenuCommand() && interaction.commandName === ASK_COMMAND_NAME && deps.ask) {
        return await onAskAgent(interaction, deps.ask);
      }
      if (interaction.isButton() && deps.feedback && (await onFeedbackClick(interaction, deps.feedback))) return;
      if (interaction.isModalSubmit()) {
        // A form opened only by a server that installed the app; anything else is refused unheard.
        if (interaction.inGuild() && !installedInGuild(interaction)) return await answer(interaction, notInstalledHere(), deps);
        const instanceId = instanceFromModalId(interaction.customId);
        if (instanceId) return await onCredentialSubmit(interaction, instanceId, deps);
        if (interaction.customId === SETUP_MODAL_ID) return await onSetupSubmit(interaction, deps);
      }
      deps.logger.debug({ type: interaction.type, id: interaction.id }, 'discord interaction ignored');
    } catch (err) {
      if (answeredElsewhere(err, interaction, deps.logger)) return;
      const code = (err as { code?: unknown } | null)?.code;
      if (code === UNKNOWN_INTERACTION || code === INVALID_WEBHOOK_TOKEN) {
        // Past Discord's windows nothing can be said any more: a second try would be refused too.
        const ageMs = Date.now() - interaction.createdTimestamp;
        deps.logger.warn({ interactionId: interaction.id, type: interaction.type, ageMs }, code === UNKNOWN_INTERACTION ? TOO_LATE : TOKEN_EXPIRED);
        return;
      }
      const ref = newReference();
      deps.logger.error({ ...errorFields(err), ref, interactionId: interaction.id }, 'discord interaction failed');
      if (!interaction.isRepliable()) return;
      const reply = problem('Something went wrong', `That did not work (reference \`${ref}\`). Try again in a moment.`);
      await answer(interaction, reply, deps).catch((e: unknown) =>
        deps.logger.warn({ ...errorFields(e), ref }, 'could not tell the user about a failed interaction'),
      );
    }
  };
}
