import {
  MessageFlags,
  type ChatInputCommandInteraction,
  type Interaction,
  type ModalSubmitInteraction,
  type RepliableInteraction,
} from 'discord.js';
import type { Logger, SecretRegistry } from '../../../src/logger.js';
import type { CommandCaller, CommandName, CommandReply, Commands } from '../../../src/commands/types.js';
import { newRef } from '../../../src/commands/format.js';
import { callerOf, isAdmin } from './access.js';
import { respondInstances } from './autocomplete.js';
import { ASK_COMMAND_NAME, COMMAND_NAME } from './definition.js';
import { onAskAgent, type AskDeps } from './ask-agent.js';
import { onFeedbackClick, type FeedbackClickDeps } from '../feedback/click.js';
import { KEY_FIELD, MAX_MODAL_INSTANCE_ID, VALUE_FIELD, credentialModal, instanceFromModalId } from './credential-modal.js';
import { renderCommandReply } from './render.js';

export interface InteractionDeps {
  commands: Commands;
  secrets: Pick<SecretRegistry, 'add' | 'redact'>;
  logger: Logger;
  adminRoleIds: readonly string[];
  /** "Ask the agent" on a message; ignored when absent. */
  ask?: AskDeps;
  /** 👍/👎 clicks on replies; ignored when absent. */
  feedback?: FeedbackClickDeps;
}

const EPHEMERAL = MessageFlags.Ephemeral;
const NO_MENTIONS = { parse: [] as [] };
const SUBCOMMANDS: ReadonlySet<string> = new Set<CommandName>([
  'help', 'instances', 'bind', 'unbind', 'status', 'credential', 'set', 'why', 'audit',
]);

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

async function runSubcommand(sub: string, i: ChatInputCommandInteraction, caller: CommandCaller, c: Commands) {
  const instance = (i.options.getString('instance') ?? '').trim();
  switch (sub) {
    case 'instances':
      return c.instances(caller);
    case 'bind': {
      if (!instance) return problem('Bind', 'Name the instance: `/agent bind instance:<id>`.');
      const mode = i.options.getString('mode');
      if (mode !== null && mode !== 'mention' && mode !== 'all') return problem('Bind', 'The mode is `mention` or `all`.');
      return c.bind(caller, instance, mode ?? undefined);
    }
    case 'unbind':
      return c.unbind(caller);
    case 'status':
      return c.status(caller);
    case 'set': {
      const setting = i.options.getString('setting') ?? '';
      const value = i.options.getString('value') ?? '';
      const quota = /^quota-(.+)$/.exec(setting);
      return quota ? c.set(caller, 'quota', `${quota[1]} ${value}`) : c.set(caller, setting, value);
    }
    case 'why':
      return c.why(caller);
    case 'audit':
      return c.audit(caller);
    default:
      return c.help();
  }
}

async function onCommand(i: ChatInputCommandInteraction, deps: InteractionDeps): Promise<void> {
  const sub = i.options.getSubcommand(false) ?? 'help';
  if (!SUBCOMMANDS.has(sub)) return answer(i, problem('Unknown command', 'Try `/agent help`.'), deps);
  if (sub === 'help') return answer(i, deps.commands.help(), deps);
  const caller = callerOf(i);
  if (!isAdmin(i, deps.adminRoleIds)) {
    await i.deferReply({ flags: EPHEMERAL });
    return answer(i, await deps.commands.refuse(caller, sub as CommandName), deps);
  }
  if (sub === 'credential') {
    const instance = (i.options.getString('instance') ?? '').trim();
    if (!instance) return answer(i, problem('Credential', 'Name the instance: `/agent credential instance:<id>`.'), deps);
    if (instance.length > MAX_MODAL_INSTANCE_ID) {
      return answer(i, problem('Credential', `That instance ID is too long (at most ${MAX_MODAL_INSTANCE_ID} characters).`), deps);
    }
    // A modal must be the first answer: no deferring here.
    await i.showModal(credentialModal(instance));
    return;
  }
  await i.deferReply({ flags: EPHEMERAL });
  return answer(i, await runSubcommand(sub, i, caller, deps.commands), deps);
}

/**
 * The credential goes to the service at once, never through the queue or Redis. While it is
 * handled the value is a registered secret, so no log line or answer can carry it.
 */
async function onCredentialSubmit(i: ModalSubmitInteraction, instanceId: string, deps: InteractionDeps): Promise<void> {
  const field = (id: string) => {
    try {
      return i.fields.getTextInputValue(id);
    } catch {
      return '';
    }
  };
  const value = field(VALUE_FIELD).trim();
  const release = deps.secrets.add(value);
  try {
    await i.deferReply({ flags: EPHEMERAL });
    const caller = callerOf(i);
    if (!isAdmin(i, deps.adminRoleIds)) return await answer(i, await deps.commands.refuse(caller, 'credential'), deps);
    const key = field(KEY_FIELD).trim();
    if (!key || !value) return await answer(i, problem('Credential not sent', 'Both the key and the value are needed.'), deps);
    await answer(i, await deps.commands.credential(caller, instanceId, key, value), deps);
  } catch (err) {
    // Logged here, while the value is still registered for redaction.
    const ref = newRef();
    deps.logger.error({ err, ref, instanceId: instanceId.slice(0, 100) }, 'discord credential submit failed');
    const reply = problem('Credential not sent', `That did not work (reference \`${ref}\`). Try again in a moment.`);
    await answer(i, reply, deps).catch(() => {});
  } finally {
    release();
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
        const instanceId = instanceFromModalId(interaction.customId);
        if (instanceId) return await onCredentialSubmit(interaction, instanceId, deps);
      }
      deps.logger.debug({ type: interaction.type, id: interaction.id }, 'discord interaction ignored');
    } catch (err) {
      const ref = newRef();
      deps.logger.error({ err, ref, interactionId: interaction.id }, 'discord interaction failed');
      if (!interaction.isRepliable()) return;
      const reply = problem('Something went wrong', `That did not work (reference \`${ref}\`). Try again in a moment.`);
      await answer(interaction, reply, deps).catch((e: unknown) =>
        deps.logger.warn({ err: e, ref }, 'could not tell the user about a failed interaction'),
      );
    }
  };
}
