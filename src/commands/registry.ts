import { code } from './format.js';
import { unquoted } from './unquoted.js';
import { describeChange, parseSetting, QUOTA_NAMES, SET_FORMS, SET_USAGE, type SettingName } from './settings.js';
import type { CommandCaller, CommandReply, Commands } from './types.js';

/**
 * Every admin command, declared once. The text parser (Slack's `/agent …`, the playground's
 * message box), the help text, the dispatcher, Discord's `/agent` definition and interaction
 * switch, Slack's slash command and the playground API all read this table: a new command is
 * one entry here plus its handler.
 */

/** Longest instance ID accepted from a command (the service's ID format is not documented). */
export const MAX_INSTANCE_ID = 200;

/** An option of a command, as Discord shows it; the text form takes the options in this order. */
export interface CommandOption {
  name: string;
  /** Discord's description: at most 100 characters. */
  description: string;
  required?: boolean;
  /** Discord offers the account's agent instances while the admin types. */
  autocompleteInstances?: boolean;
  /** Discord offers only these values. */
  choices?: readonly { name: string; value: string }[];
  /** Longest value Discord accepts. */
  maxLength?: number;
  /** What the help text shows for a value without choices: `instance:<id>`. @defaultValue the option's name */
  placeholder?: string;
}

/** What a reader answers when the input cannot be used: words for the user. */
export interface Invalid {
  invalid: string;
}

export function isInvalid(value: object): value is Invalid {
  return 'invalid' in value && typeof (value as Invalid).invalid === 'string';
}

/** A line of the help text. */
export interface HelpLine {
  /** As typed after the command name: `bind <instance-id> [mention|all]`. */
  usage: string;
  /**
   * As chosen in named options (Discord): `set setting:errors value:reply|reaction|silent`.
   * Absent in a form: it has none (Slack's `set prompts`), and that help leaves the line out.
   */
  named?: string;
  help: string;
}

/**
 * How a platform's users give a command's arguments: typed words after its name (Slack, the
 * playground: `/agent bind demo all`), or named options (Discord: `/agent bind instance:demo mode:all`).
 */
export type ArgumentStyle = 'words' | 'named';

interface EntryFields<N extends string, A extends object> {
  name: N;
  /** Other words that run this command in the text form (`?` for help). */
  aliases?: readonly string[];
  /** As typed after the command name: `bind <instance-id> [mention|all]`. */
  usage: string;
  /** One line for the help text: what the command does. */
  help: string;
  /** Several help lines instead of `usage` + `help`, for a command with several forms (`set`). */
  forms?: readonly HelpLine[];
  /** Discord's description of the subcommand: at most 100 characters. */
  summary: string;
  /** Only workspace/server admins may run it; anyone else is refused (and the refusal audited). */
  admin: boolean;
  options: readonly CommandOption[];
  /**
   * Reads the words typed after the command name. Never throws.
   * @defaultValue no arguments; any word is refused ("Too many words: …")
   */
  parseText?(words: readonly string[]): A | Invalid;
  /**
   * Reads the options a platform sent by name (Discord), each trimmed, `''` when absent. Never throws.
   * @defaultValue no arguments
   */
  readOptions?(option: (name: string) => string): A | Invalid;
}

/** A command every platform runs the same way, on the shared handlers. */
export interface RunCommand<N extends string = string, A extends object = object> extends EntryFields<N, A> {
  run(commands: Commands, caller: CommandCaller, args: A): Promise<CommandReply> | CommandReply;
  form?: undefined;
}

/**
 * A command that asks for a secret: each platform opens its own private form (Slack and
 * Discord modals, the playground's panel), whose submission calls the handler.
 */
export interface FormCommand<N extends string = string, A extends object = object> extends EntryFields<N, A> {
  form: 'credential' | 'setup';
  run?: undefined;
}

export type CommandEntry<N extends string = string, A extends object = object> = RunCommand<N, A> | FormCommand<N, A>;

/** Keeps each entry's name and argument types, so `ParsedCommand` is derived from the table. */
function command<N extends string, A extends object = Record<never, never>>(entry: RunCommand<N, A>): RunCommand<N, A>;
function command<N extends string, A extends object = Record<never, never>>(entry: FormCommand<N, A>): FormCommand<N, A>;
function command(entry: CommandEntry): CommandEntry {
  return entry;
}

function invalid(message: string): Invalid {
  return { invalid: message };
}

/** Words past what a command takes, refused the same way for every command, the words named. */
function tooManyWords(extra: readonly string[], usage: string): Invalid {
  return invalid(`Too many words: ${code(extra.join(' '), 40)}. Use \`${usage}\`.`);
}

/** An instance ID typed as a word: present and not too long. */
function instanceWord(word: string | undefined, usage: string): string | Invalid {
  if (word === undefined || word === '') return invalid(`Name the instance: \`${usage}\`. Run \`instances\` to see the IDs.`);
  if (Array.from(word).length > MAX_INSTANCE_ID) return invalid(`That instance ID is too long (at most ${MAX_INSTANCE_ID} characters).`);
  return word;
}

const INSTANCE_OPTION = {
  name: 'instance',
  description: 'Instance ID',
  required: true,
  autocompleteInstances: true,
  maxLength: MAX_INSTANCE_ID,
  placeholder: 'id',
} as const satisfies CommandOption;

type Mode = 'mention' | 'all';
const isMode = (value: string): value is Mode => value === 'mention' || value === 'all';

/** `set` settings as Discord choices (one option each); `quota-*` stand for `set quota <name> <n>`. */
export const SETTING_CHOICES: readonly string[] = (Object.keys(SET_FORMS) as SettingName[]).flatMap((setting) =>
  setting === 'quota' ? Object.keys(QUOTA_NAMES).map((quota) => `quota-${quota}`) : [setting],
);

const BIND_USAGE = 'bind <instance-id> [mention|all]';
/** `set prompts`: typed only (Slack's assistant); Discord's `set` has no such choice. */
const PROMPTS_FORM = 'set prompts <title> | <title> … (up to 4, or default)';
const CREDENTIAL_USAGE = 'credential <instance-id>';

/** The commands, in the order help and Discord list them. */
export const COMMANDS = [
  command({
    name: 'instances',
    usage: 'instances',
    help: 'list the agent instances of the account',
    summary: 'List the agent instances of the account',
    admin: true,
    options: [],
    run: (c, caller) => c.instances(caller),
  }),

  command<'bind', { instanceId: string; mode?: Mode }>({
    name: 'bind',
    usage: BIND_USAGE,
    help: 'answer in this channel with that instance (`mention`, the default: when addressed; `all`: every message)',
    summary: 'Answer in this channel with an agent instance',
    admin: true,
    options: [
      INSTANCE_OPTION,
      {
        name: 'mode',
        description: 'When to answer',
        choices: [
          { name: 'when mentioned or replied to', value: 'mention' },
          { name: 'every message', value: 'all' },
        ],
      },
    ],
    parseText(words) {
      const instanceId = instanceWord(words[0], BIND_USAGE);
      if (typeof instanceId !== 'string') return instanceId;
      if (words.length > 2) return tooManyWords(words.slice(2), BIND_USAGE);
      const mode = words[1]?.toLowerCase();
      if (mode === undefined) return { instanceId };
      if (isMode(mode)) return { instanceId, mode };
      return invalid(`The mode is \`mention\` (answer when addressed) or \`all\` (every message). Use \`${BIND_USAGE}\`.`);
    },
    readOptions(option) {
      const instanceId = unquoted(option('instance'));
      if (!instanceId) return invalid('Name the instance: `bind instance:<id>`.');
      const mode = option('mode');
      if (mode === '') return { instanceId };
      return isMode(mode) ? { instanceId, mode } : invalid('The mode is `mention` or `all`.');
    },
    run: (c, caller, { instanceId, mode }) => c.bind(caller, instanceId, mode),
  }),

  command({
    name: 'unbind',
    usage: 'unbind',
    help: 'stop answering in this channel',
    summary: 'Stop answering in this channel',
    admin: true,
    options: [],
    run: (c, caller) => c.unbind(caller),
  }),

  command({
    name: 'status',
    usage: 'status',
    help: "this channel's binding, the queue, whether the agent service answers, and usage against quotas",
    summary: 'Binding, settings and usage of this channel',
    admin: true,
    options: [],
    run: (c, caller) => c.status(caller),
  }),

  command<'credential', { instanceId: string }>({
    name: 'credential',
    usage: CREDENTIAL_USAGE,
    help: 'add a credential (key and value) to an instance',
    summary: 'Give an agent instance a credential (opens a private form)',
    admin: true,
    // Discord's modal custom_id holds the instance ID in 100 characters with its prefix.
    options: [{ ...INSTANCE_OPTION, maxLength: 80 }],
    form: 'credential',
    parseText(words) {
      const instanceId = instanceWord(words[0], CREDENTIAL_USAGE);
      if (typeof instanceId !== 'string') return instanceId;
      // Whatever follows may be a secret: it is never echoed.
      if (words.length > 1) {
        return invalid(
          `Use \`${CREDENTIAL_USAGE}\` on its own: the key and value are asked for in a private form. If you typed a secret here, consider it exposed and rotate it.`,
        );
      }
      return { instanceId };
    },
    readOptions(option) {
      const instanceId = unquoted(option('instance'));
      return instanceId ? { instanceId } : invalid('Name the instance: `credential instance:<id>`.');
    },
  }),

  command<'setup'>({
    name: 'setup',
    usage: 'setup',
    help: "this workspace's own agent-service API key (and optional dashboard session), when the bridge runs with one account per workspace (opens a private form)",
    summary: "Set this workspace's agent account (opens a private form)",
    admin: true,
    options: [],
    form: 'setup',
    parseText(words) {
      // Whatever follows may be the key itself: it is never echoed.
      if (words.length > 0) {
        return invalid('Use `setup` on its own: the key is asked for in a private form. If you typed a key here, consider it exposed and rotate it.');
      }
      return {};
    },
  }),

  command<'set', { setting: string; value: string }>({
    name: 'set',
    usage: 'set <setting> <value>',
    help: 'change a setting of this channel',
    forms: [
      { usage: SET_FORMS.errors, named: 'set setting:errors value:reply|reaction|silent', help: 'how failures show in this channel (reply in words, warning reaction only, or nothing)' },
      { usage: SET_FORMS.context, named: 'set setting:context value:off|thread', help: "send a thread's earlier messages to the agent along with each message" },
      {
        usage: SET_FORMS.quota,
        named: `set setting:quota-<${Object.keys(QUOTA_NAMES).join('|')}> value:<n|default>`,
        help: 'message limits for this channel (0 = unlimited, `default` = back to the default)',
      },
      { usage: PROMPTS_FORM, help: "what Slack's assistant suggests when a thread starts from this channel" },
    ],
    summary: 'Change a setting of this channel',
    admin: true,
    options: [
      {
        name: 'setting',
        description: 'What to change',
        required: true,
        choices: SETTING_CHOICES.map((c) => ({ name: c, value: c })),
      },
      {
        name: 'value',
        description: 'errors: reply|reaction|silent · context: off|thread · quota: a number or default',
        required: true,
        maxLength: 100,
      },
    ],
    parseText([setting, ...rest]) {
      if (setting === undefined) return invalid('Say what to set: `set errors …`, `set context …`, `set quota …` or `set prompts …`.');
      // Prompt titles keep their case and words: the handler reads them.
      if (setting.toLowerCase() === 'prompts') return { setting: 'prompts', value: rest.join(' ') };
      if (!Object.hasOwn(SET_FORMS, setting.toLowerCase())) {
        return invalid(`There is no setting ${code(setting, 40)}. Use one of: ${SET_USAGE.join(', ')}, \`${PROMPTS_FORM}\`.`);
      }
      const result = parseSetting(setting, rest.join(' '));
      return result.ok ? describeChange(result.change) : invalid(result.error);
    },
    // The handler validates, so a refused value is answered (and audited) the same way everywhere.
    readOptions(option) {
      const setting = option('setting');
      const value = option('value');
      const quota = /^quota-(.+)$/.exec(setting);
      return quota ? { setting: 'quota', value: `${quota[1]} ${value}` } : { setting, value };
    },
    run: (c, caller, { setting, value }) => c.set(caller, setting, value),
  }),

  command({
    name: 'why',
    usage: 'why',
    help: 'why recent messages in this channel got no answer',
    summary: 'Why recent messages here got no answer',
    admin: true,
    options: [],
    run: (c, caller) => c.why(caller),
  }),

  command({
    name: 'audit',
    usage: 'audit',
    help: 'recent admin actions',
    summary: 'Recent admin actions',
    admin: true,
    options: [],
    run: (c, caller) => c.audit(caller),
  }),

  command({
    name: 'feedback',
    usage: 'feedback',
    help: 'votes on replies per instance in the last 7 days, and the latest negative ones with links',
    summary: 'Feedback on agent replies, last 7 days',
    admin: true,
    options: [],
    run: (c, caller) => c.feedback(caller),
  }),

  command({
    name: 'help',
    aliases: ['?'],
    usage: 'help',
    help: 'this list',
    summary: 'How to use the bot',
    admin: false,
    options: [],
    run: (c) => c.help(),
  }),
] as const;

/** What an empty command line runs. */
export const DEFAULT_COMMAND = 'help' satisfies CommandName;

type Entry = (typeof COMMANDS)[number];
type ArgsOf<E> = E extends CommandEntry<string, infer A> ? A : never;

export type CommandName = Entry['name'];

/** A command read from text or options: its name and its arguments, or words for the user. */
export type ParsedCommand =
  | { [E in Entry as E['name']]: { name: E['name'] } & ArgsOf<E> }[CommandName]
  | { name: 'invalid'; error: string };

/** The commands every platform runs the same way (not the secret form, not unreadable input). */
export type PlainCommand = Exclude<ParsedCommand, { name: 'invalid' } | { name: FormCommandName }>;
type FormCommandName = Extract<Entry, { form: string }>['name'];

const BY_WORD = new Map<string, CommandEntry<CommandName>>();
for (const entry of COMMANDS as readonly CommandEntry<CommandName>[]) {
  for (const word of [entry.name, ...(entry.aliases ?? [])]) BY_WORD.set(word, entry);
}

/** Commands that take no options and open no form (the playground runs them as buttons). */
export const COMMANDS_WITHOUT_OPTIONS = (COMMANDS as readonly CommandEntry<CommandName>[])
  .filter((entry) => entry.run && entry.options.length === 0)
  .map((entry) => entry.name) as [CommandName, ...CommandName[]];

/** The entry for a command name or alias as typed (any case), or undefined. */
export function findCommand(word: string): CommandEntry<CommandName> | undefined {
  return BY_WORD.get(word.toLowerCase());
}

/** What a command reads from the words typed after its name; a command that takes none refuses any. */
export function readText(entry: CommandEntry, words: readonly string[]): object {
  if (entry.parseText) return entry.parseText(words);
  return words.length > 0 ? tooManyWords(words, entry.usage) : {};
}

/** A text of the table in a platform's words: "workspace" is a Slack word (a Discord server). */
export function inWords(text: string, workspaceNoun: string): string {
  return workspaceNoun === 'workspace' ? text : text.replace(/\bworkspace\b/g, workspaceNoun);
}

/** Builds the parsed command from an entry and what its reader returned. */
export function parsedFrom(entry: CommandEntry, args: object): ParsedCommand {
  if (isInvalid(args)) return { name: 'invalid', error: args.invalid };
  return { ...args, name: entry.name } as ParsedCommand;
}
