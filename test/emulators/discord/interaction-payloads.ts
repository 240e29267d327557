/**
 * INTERACTION_CREATE payloads as Discord sends them: slash commands with a subcommand,
 * message commands (context menu, `data.type` 3 with `resolved.messages`), button clicks
 * (MESSAGE_COMPONENT), autocomplete (one option `focused`), and modal submits (Label components, type 18).
 */
import { botPermissionsIn, channelObject, memberObject, userObject, type Json } from './payloads.js';
import { snowflake, type EmuChannel, type EmuUser, type World } from './world.js';

export const INTERACTION_TYPES = { ApplicationCommand: 2, MessageComponent: 3, Autocomplete: 4, ModalSubmit: 5 } as const;
const COMMAND_TYPE_MESSAGE = 3;
const COMPONENT_BUTTON = 2;
const OPTION_STRING = 3;
const OPTION_SUBCOMMAND = 1;

export interface InteractionBase {
  user: EmuUser;
  channel: EmuChannel;
  /**
   * Who installed the app the command comes from: the guild (the default, a bot invite) or the
   * user (Discord's "Add App" to one's account, usable in any server, the bot a member or not).
   * Discord says which in `authorizing_integration_owners`: `{"0": guild_id}` or `{"1": user_id}`.
   */
  installedBy?: 'guild' | 'user';
}

function envelope(world: World, base: InteractionBase, type: number, data: Json): Json {
  const inGuild = base.channel.guildId !== undefined;
  return {
    id: snowflake(),
    application_id: world.applicationId,
    type,
    token: `itoken-${snowflake()}-${Math.random().toString(36).slice(2)}`,
    version: 1,
    data,
    channel_id: base.channel.id,
    channel: channelObject(base.channel, world),
    locale: 'en-US',
    // The bot's permissions where the interaction happened: a command works in any channel,
    // also one where the bot may not post.
    app_permissions: botPermissionsIn(base.channel, world),
    entitlements: [],
    attachment_size_limit: 10_485_760,
    ...(inGuild
      ? {
          guild_id: base.channel.guildId,
          guild: { id: base.channel.guildId, locale: 'en-US', features: [] },
          guild_locale: 'en-US',
          member: { ...memberObject(base.user, true), permissions: base.user.permissions },
          authorizing_integration_owners: base.installedBy === 'user' ? { '1': base.user.id } : { '0': base.channel.guildId },
          context: 0,
        }
      : { user: userObject(base.user), authorizing_integration_owners: { '1': base.user.id }, context: 1 }),
  };
}

function stringOptions(options: Record<string, string>, focused?: string): Json[] {
  return Object.entries(options).map(([name, value]) => ({
    type: OPTION_STRING,
    name,
    value,
    ...(name === focused ? { focused: true } : {}),
  }));
}

export interface CommandInput extends InteractionBase {
  commandId: string;
  subcommand: string;
  options?: Record<string, string>;
}

export function commandInteraction(world: World, input: CommandInput): Json {
  return envelope(world, input, INTERACTION_TYPES.ApplicationCommand, {
    id: input.commandId,
    name: 'agent',
    type: 1,
    ...(input.channel.guildId ? { guild_id: input.channel.guildId } : {}),
    options: [{ type: OPTION_SUBCOMMAND, name: input.subcommand, options: stringOptions(input.options ?? {}) }],
  });
}

export interface AutocompleteInput extends CommandInput {
  /** Name of the option being typed; its value is in `options`. */
  focused: string;
}

export function autocompleteInteraction(world: World, input: AutocompleteInput): Json {
  return envelope(world, input, INTERACTION_TYPES.Autocomplete, {
    id: input.commandId,
    name: 'agent',
    type: 1,
    options: [{ type: OPTION_SUBCOMMAND, name: input.subcommand, options: stringOptions(input.options ?? {}, input.focused) }],
  });
}

export interface ModalInput extends InteractionBase {
  customId: string;
  fields: Record<string, string>;
}

export function modalSubmitInteraction(world: World, input: ModalInput): Json {
  let n = 0;
  return envelope(world, input, INTERACTION_TYPES.ModalSubmit, {
    custom_id: input.customId,
    components: Object.entries(input.fields).map(([customId, value]) => ({
      type: 18,
      id: ++n,
      component: { type: 4, id: ++n, custom_id: customId, value },
    })),
  });
}

export interface MessageCommandInput extends InteractionBase {
  commandId: string;
  /** The command's name as registered, e.g. "Ask the agent". */
  name: string;
  /** The message the user right-clicked (as the emulator stored it). */
  target: Json;
}

export function messageCommandInteraction(world: World, input: MessageCommandInput): Json {
  return envelope(world, input, INTERACTION_TYPES.ApplicationCommand, {
    id: input.commandId,
    name: input.name,
    type: COMMAND_TYPE_MESSAGE,
    target_id: input.target.id,
    ...(input.channel.guildId ? { guild_id: input.channel.guildId } : {}),
    resolved: { messages: { [input.target.id]: input.target } },
  });
}

export interface ComponentInput extends InteractionBase {
  /** The message carrying the button. */
  message: Json;
  customId: string;
}

export function componentInteraction(world: World, input: ComponentInput): Json {
  return {
    ...envelope(world, input, INTERACTION_TYPES.MessageComponent, { custom_id: input.customId, component_type: COMPONENT_BUTTON }),
    message: input.message,
  };
}
