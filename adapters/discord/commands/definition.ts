import {
  InteractionContextType,
  PermissionFlagsBits,
  SlashCommandBuilder,
  SlashCommandStringOption,
  SlashCommandSubcommandBuilder,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { COMMANDS, type CommandEntry, type CommandOption } from '../../../src/commands/registry.js';

export const COMMAND_NAME = 'agent';

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
  const built = new SlashCommandSubcommandBuilder().setName(entry.name).setDescription(entry.summary);
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
    .setContexts(InteractionContextType.Guild);
  for (const entry of COMMANDS as readonly CommandEntry[]) command.addSubcommand(subcommand(entry));
  return command.toJSON();
}
