import { code } from './format.js';
import { DEFAULT_COMMAND, findCommand, parsedFrom, readText, type ParsedCommand } from './registry.js';
import { unquoted } from './unquoted.js';

/** Echoes an unknown command safely (short, no backticks or mentions). */
function unknownCommand(word: string): ParsedCommand {
  return { name: 'invalid', error: `Unknown command ${code(word, 40)}. Run \`help\` to see the commands.` };
}

function parse(text: string): ParsedCommand {
  // Control and format characters count as spaces, so nothing invisible ends up in an ID.
  const words = text
    .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
    .trim()
    .split(/\s+/u)
    .filter(Boolean)
    // `demo-helper` or "demo-helper" (a pasted code span, a quoted ID) is demo-helper.
    .map(unquoted)
    .filter(Boolean);
  const [first = DEFAULT_COMMAND, ...args] = words;
  const entry = findCommand(first);
  if (!entry) return unknownCommand(first);
  return parsedFrom(entry, readText(entry, args));
}

/**
 * Parses the text of a Slack-style command (`bind inst_a all`) with the readers of the command
 * table (`COMMANDS`). Never throws: anything it cannot read becomes `{ name: 'invalid', error }`
 * with words for the user.
 */
export function parseCommandText(text: string): ParsedCommand {
  try {
    return parse(typeof text === 'string' ? text : '');
  } catch {
    return { name: 'invalid', error: 'That command could not be read. Run `help` to see the commands.' };
  }
}
