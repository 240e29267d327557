import { COMMANDS, inWords, type ArgumentStyle, type CommandEntry } from './registry.js';

/** A command's usage in named options, from its options: `bind instance:<id> [mode:mention|all]`. */
function namedUsage(entry: CommandEntry): string {
  const options = entry.options.map((o) => {
    const value = `${o.name}:${o.choices ? o.choices.map((c) => c.value).join('|') : `<${o.placeholder ?? o.name}>`}`;
    return o.required ? value : `[${value}]`;
  });
  return [entry.name, ...options].join(' ');
}

/**
 * The help text's lines, with the platform's command (`/agent`) in front of each usage, its noun
 * for a workspace, and its way of giving arguments (a form without a named usage is left out).
 */
export function helpLines(commandName: string, workspaceNoun = 'workspace', style: ArgumentStyle = 'words'): string[] {
  return (COMMANDS as readonly CommandEntry[]).flatMap((entry) =>
    (entry.forms ?? [{ usage: entry.usage, named: namedUsage(entry), help: entry.help }]).flatMap((line) => {
      const usage = style === 'named' ? line.named : line.usage;
      return usage === undefined ? [] : [`\`${commandName} ${usage}\`: ${inWords(line.help, workspaceNoun)}`];
    }),
  );
}
