import { code } from './format.js';
import { describeChange, parseSetting } from './settings.js';
import type { ParsedCommand } from './types.js';

/** Longest instance ID accepted from a command (the service's ID format is not documented). */
const MAX_ID = 200;

function invalid(error: string): ParsedCommand {
  return { name: 'invalid', error };
}

function instanceId(token: string | undefined, usage: string): string | ParsedCommand {
  if (token === undefined) return invalid(`Name the instance: ${usage}. Run \`instances\` to see the IDs.`);
  if (Array.from(token).length > MAX_ID) return invalid(`That instance ID is too long (at most ${MAX_ID} characters).`);
  return token;
}

function parse(text: string): ParsedCommand {
  // Control and format characters count as spaces, so nothing invisible ends up in an ID.
  const words = text
    .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
    .trim()
    .split(/\s+/u)
    .filter(Boolean)
    .map((w) => w.replace(/^(["'“”‘’])(.*)\1$/u, '$2'))
    .filter(Boolean);
  const [first, ...args] = words;
  const sub = first?.toLowerCase();
  switch (sub) {
    case undefined:
    case 'help':
    case '?':
      return { name: 'help' };
    case 'instances':
    case 'unbind':
    case 'status':
    case 'why':
    case 'audit':
      return { name: sub };
    case 'bind': {
      const usage = '`bind <instance-id> [mention|all]`';
      const id = instanceId(args[0], usage);
      if (typeof id !== 'string') return id;
      if (args.length > 2) return invalid(`Too many words. Use ${usage}.`);
      const mode = args[1]?.toLowerCase();
      if (mode === undefined) return { name: 'bind', instanceId: id };
      if (mode === 'mention' || mode === 'all') return { name: 'bind', instanceId: id, mode };
      return invalid(`The mode is \`mention\` (answer when addressed) or \`all\` (every message). Use ${usage}.`);
    }
    case 'credential': {
      const usage = '`credential <instance-id>`';
      const id = instanceId(args[0], usage);
      if (typeof id !== 'string') return id;
      // Whatever follows may be a secret: it is never echoed.
      if (args.length > 1) {
        return invalid(
          `Use ${usage} on its own: the key and value are asked for in a private form. If you typed a secret here, consider it exposed and rotate it.`,
        );
      }
      return { name: 'credential', instanceId: id };
    }
    case 'set': {
      const [setting, ...rest] = args;
      if (setting === undefined) return invalid('Say what to set: `set errors …`, `set context …` or `set quota …`.');
      const result = parseSetting(setting, rest.join(' '));
      if (!result.ok) return invalid(result.error);
      return { name: 'set', ...describeChange(result.change) };
    }
    default:
      return invalid(`Unknown command ${code(first ?? '', 40)}. Run \`help\` to see the commands.`);
  }
}

/**
 * Parses the text of a Slack-style command (`bind inst_a all`). Never throws: anything it
 * cannot read becomes `{ name: 'invalid', error }` with words for the user.
 */
export function parseCommandText(text: string): ParsedCommand {
  try {
    return parse(typeof text === 'string' ? text : '');
  } catch {
    return invalid('That command could not be read. Run `help` to see the commands.');
  }
}
