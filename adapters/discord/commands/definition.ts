import {
  ApplicationCommandType,
  ApplicationIntegrationType,
  ContextMenuCommandBuilder,
  InteractionContextType,
  PermissionFlagsBits,
  SlashCommandBuilder,
  SlashCommandStringOption,
  SlashCommandSubcommandBuilder,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import { COMMANDS, inWords, type CommandEntry, type CommandOption } from '../../../src/commands/registry.js';

/** What Discord calls a workspace (the platform's vocabulary and the registered descriptions). */
export const DISCORD_WORKSPACE_NOUN = 'server';

export const COMMAND_NAME = 'agent';
/** The message context-menu command (right-click a message → Apps). */
export const ASK_COMMAND_NAME = 'Ask the agent';

export { SETTING_CHOICES } from '../../../src/commands/registry.js';

/** A command option as a Discord string option. */
function stringOption(option: CommandOption): SlashCommandStringOption {
  const built = new SlashCommandStringOption().setName(option.name).setDescription(option.description);
  if (option.required) built.setRequired(true);
  if (option.autocompleteInstances) built.setAutocomplete(true);
  if (option.choices) built.addChoices(...option.choices);
  if (option.maxLength !== undefined) built.setMaxLength(option.maxLength);
  return built;
}

/** A command of the table as a subcommand of `/agent`. */
function subcommand(entry: CommandEntry): SlashCommandSubcommandBuilder {
  const built = new SlashCommandSubcommandBuilder().setName(entry.name).setDescription(inWords(entry.summary, DISCORD_WORKSPACE_NOUN));
  for (const option of entry.options) built.addStringOption(stringOption(option));
  return built;
}

/**
 * The `/agent` command, one subcommand per entry of the command table. Only members with
 * Manage Server see it by default (`default_member_permissions` = 32); the handler checks
 * again, with DISCORD_ADMIN_ROLE_IDS.
 */
export function agentCommand(): RESTPostAPIChatInputApplicationCommandsJSONBody {
  const command = new SlashCommandBuilder()
    .setName(COMMAND_NAME)
    .setDescription('Connect this server to hosted AI agents')
    .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
    .setContexts(InteractionContextType.Guild)
    // Unset, Discord uses the app's configured installs, User Install included where the portal
    // has it on: `/agent` would then come to any server its user is in (the handler refuses there).
    .setIntegrationTypes(ApplicationIntegrationType.GuildInstall);
  for (const entry of COMMANDS as readonly CommandEntry[]) command.addSubcommand(subcommand(entry));
  return command.toJSON();
}

/**
 * "Ask the agent" on any message (a message command, type 3: no description). Everyone who can
 * see the message may use it; quotas and the channel's binding decide what happens.
 */
export function askAgentCommand(): RESTPostAPIContextMenuApplicationCommandsJSONBody {
  return new ContextMenuCommandBuilder()
    .setName(ASK_COMMAND_NAME)
    .setType(ApplicationCommandType.Message)
    .setContexts(InteractionContextType.Guild, InteractionContextType.BotDM)
    .setIntegrationTypes(ApplicationIntegrationType.GuildInstall)
    .toJSON();
}
