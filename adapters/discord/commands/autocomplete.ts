import type { AutocompleteInteraction, ApplicationCommandOptionChoiceData } from 'discord.js';
import type { Instance } from '../../../src/agent-api/types.js';
import { probeWithin } from '../../../src/commands/agent-errors.js';
import { findCommand } from '../../../src/commands/registry.js';
import type { Commands } from '../../../src/commands/types.js';

/** Discord shows at most 25 choices; names and values are at most 100 characters. */
const MAX_CHOICES = 25;
const MAX_LEN = 100;
/** Discord drops an autocomplete answer after 3 s; leave room for the round trip. */
const LOOKUP_TIMEOUT_MS = 2_000;

function clip(text: string, max = MAX_LEN): string {
  const chars = Array.from(text.replace(/\p{Cc}/gu, ' '));
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : chars.join('');
}

/** Instances matching what was typed (ID or name, case-insensitive), best matches first. */
export function instanceChoices(instances: readonly Instance[], typed: string): ApplicationCommandOptionChoiceData<string>[] {
  const q = typed.trim().toLowerCase();
  const scored = instances
    .filter((i) => typeof i.id === 'string' && i.id.length > 0 && i.id.length <= MAX_LEN)
    .map((i) => {
      const id = i.id.toLowerCase();
      const name = String(i.name ?? '').toLowerCase();
      const score = !q ? 1 : id.startsWith(q) || name.startsWith(q) ? 2 : id.includes(q) || name.includes(q) ? 1 : 0;
      return { i, score };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score);
  return scored.slice(0, MAX_CHOICES).map(({ i }) => ({
    name: clip(`${i.name || i.id} · ${i.id} · ${i.status || 'unknown'}`),
    value: i.id,
  }));
}

/**
 * Answers autocomplete for options the command table marks `autocompleteInstances`, from the cached instance list. Non-admins and
 * failed lookups get an empty list: autocomplete never shows an error.
 */
export async function respondInstances(
  interaction: AutocompleteInteraction,
  commands: Pick<Commands, 'cachedInstances'>,
  admin: boolean,
): Promise<void> {
  const focused = interaction.options.getFocused(true);
  const option = findCommand(interaction.options.getSubcommand(false) ?? '')?.options.find((o) => o.name === focused.name);
  let choices: ApplicationCommandOptionChoiceData<string>[] = [];
  if (admin && option?.autocompleteInstances) {
    try {
      choices = instanceChoices(await probeWithin(commands.cachedInstances(), LOOKUP_TIMEOUT_MS, 'listing instances'), String(focused.value));
    } catch {
      choices = [];
    }
  }
  await interaction.respond(choices);
}
