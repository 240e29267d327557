import type { CommandCaller, CommandReply, Commands, ParsedCommand } from './types.js';

/** The subcommands every platform runs the same way; `credential` and `invalid` are each platform's own. */
export type PlainCommand = Exclude<ParsedCommand, { name: 'credential' } | { name: 'invalid' }>;

/** Runs a parsed text command (Slack's `/agent …`, the playground's message box) on the shared handlers. */
export function runPlainCommand(commands: Commands, caller: CommandCaller, parsed: PlainCommand): Promise<CommandReply> {
  switch (parsed.name) {
    case 'help':
      return Promise.resolve(commands.help());
    case 'instances':
      return commands.instances(caller);
    case 'bind':
      return commands.bind(caller, parsed.instanceId, parsed.mode);
    case 'unbind':
      return commands.unbind(caller);
    case 'status':
      return commands.status(caller);
    case 'set':
      return commands.set(caller, parsed.setting, parsed.value);
    case 'why':
      return commands.why(caller);
    case 'audit':
      return commands.audit(caller);
  }
}
