import {
  ApplicationCommandType,
  ContextMenuCommandBuilder,
  InteractionContextType,
  PermissionFlagsBits,
  SlashCommandBuilder,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';

export const COMMAND_NAME = 'agent';
/** The message context-menu command (right-click a message → Apps). */
export const ASK_COMMAND_NAME = 'Ask the agent';

/** `set` settings as Discord choices; `quota-*` map to `set quota <name> <n>`. */
export const SETTING_CHOICES = [
  'errors',
  'context',
  'quota-user-per-minute',
  'quota-user-per-day',
  'quota-channel-per-minute',
  'quota-channel-per-day',
] as const;

/**
 * The `/agent` command. Only members with Manage Server see it by default
 * (`default_member_permissions` = 32); the handler checks again, with DISCORD_ADMIN_ROLE_IDS.
 */
export function agentCommand(): RESTPostAPIChatInputApplicationCommandsJSONBody {
  return new SlashCommandBuilder()
    .setName(COMMAND_NAME)
    .setDescription('Connect this server to hosted AI agents')
    .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
    .setContexts(InteractionContextType.Guild)
    .addSubcommand((s) => s.setName('instances').setDescription('List the agent instances of the account'))
    .addSubcommand((s) =>
      s
        .setName('bind')
        .setDescription('Answer in this channel with an agent instance')
        .addStringOption((o) =>
          o.setName('instance').setDescription('Instance ID').setRequired(true).setAutocomplete(true).setMaxLength(200),
        )
        .addStringOption((o) =>
          o
            .setName('mode')
            .setDescription('When to answer')
            .addChoices({ name: 'when mentioned or replied to', value: 'mention' }, { name: 'every message', value: 'all' }),
        ),
    )
    .addSubcommand((s) => s.setName('unbind').setDescription('Stop answering in this channel'))
    .addSubcommand((s) => s.setName('status').setDescription('Binding, settings and usage of this channel'))
    .addSubcommand((s) =>
      s
        .setName('credential')
        .setDescription('Give an agent instance a credential (opens a private form)')
        .addStringOption((o) =>
          o.setName('instance').setDescription('Instance ID').setRequired(true).setAutocomplete(true).setMaxLength(80),
        ),
    )
    .addSubcommand((s) =>
      s
        .setName('set')
        .setDescription('Change a setting of this channel')
        .addStringOption((o) =>
          o
            .setName('setting')
            .setDescription('What to change')
            .setRequired(true)
            .addChoices(...SETTING_CHOICES.map((c) => ({ name: c, value: c }))),
        )
        .addStringOption((o) =>
          o
            .setName('value')
            .setDescription('errors: reply|reaction|silent · context: off|thread · quota: a number or default')
            .setRequired(true)
            .setMaxLength(100),
        ),
    )
    .addSubcommand((s) => s.setName('why').setDescription('Why recent messages here got no answer'))
    .addSubcommand((s) => s.setName('audit').setDescription('Recent admin actions'))
    .addSubcommand((s) => s.setName('help').setDescription('How to use the bot'))
    .toJSON();
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
    .toJSON();
}
