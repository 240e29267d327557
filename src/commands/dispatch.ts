import { findCommand, type PlainCommand } from './registry.js';
import type { CommandCaller, CommandReply, Commands } from './types.js';

export type { PlainCommand } from './registry.js';

/**
 * Runs a parsed command (Slack's `/agent …`, the playground's message box, Discord's options)
 * on the shared handlers, through its entry in the command table.
 */
export async function runPlainCommand(commands: Commands, caller: CommandCaller, parsed: PlainCommand): Promise<CommandReply> {
  const { name, ...args } = parsed as { name: string };
  const entry = findCommand(name);
  if (!entry?.run) throw new Error(`command ${name} has no handler of its own`);
  return entry.run(commands, caller, args);
}
