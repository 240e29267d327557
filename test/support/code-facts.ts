import { ShardStates } from '../../adapters/discord/shard-states.js';
import { CHANNEL_LIFE_EVENTS } from '../../adapters/slack/channel-life.js';
import { findCommand, isInvalid, readText } from '../../src/commands/registry.js';
import { feedbackCounter } from '../../src/feedback/feedback-metric.js';
import { Metrics } from '../../src/metrics.js';
import { findAll, readRepoFile, sourceFiles } from './docs-reading.js';

/**
 * What the code says, read for test/ops/docs-truth.test.ts: the metrics it registers, label
 * values and events found in its source, and whether the command parser takes a command.
 */

const SET_SETTINGS = ['errors', 'context', 'quota', 'prompts'];

/** Every metric a process can register, with its label names. */
export async function registeredMetrics(): Promise<Map<string, string[]>> {
  const metrics = new Metrics();
  feedbackCounter(metrics.registry);
  new ShardStates(metrics.registry);
  const json = await metrics.registry.getMetricsAsJSON();
  return new Map(json.map((m) => [m.name, (metrics.registry.getSingleMetric(m.name) as unknown as { labelNames: string[] }).labelNames ?? []]));
}

/** The members of a union of string literals `type Name = | 'a' | 'b';` in a source file. */
export function unionMembers(file: string, typeName: string): string[] {
  const body = new RegExp(`type ${typeName} =([^;]+);`).exec(readRepoFile(file).replace(/\/\*\*[\s\S]*?\*\//g, ''))![1]!;
  return [...body.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
}

/** The values code gives `label` of a metric, found as `label: 'value'` beside its `.inc(`/`.set(` calls. */
export function labelValuesInSource(property: string, label: string): string[] {
  const calls = sourceFiles('src', 'adapters').flatMap((f) => [...readRepoFile(f).matchAll(new RegExp(`\\.${property}\\.(?:inc|set|observe)\\(\\{[^}]*\\b${label}: '([a-z_]+)'`, 'g'))]);
  return [...new Set(calls.map((m) => m[1]!))];
}

/** What is wrong with a command as the docs write it after `/agent` (words, or Discord's `name:value`). */
export function commandProblem(text: string, refusedExamples: ReadonlySet<string>): string | undefined {
  const words = text.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0 || words[0] === '…') return undefined;
  const entry = findCommand(words[0]!);
  if (!entry) return `no command ${words[0]}`;
  const rest = words.slice(1);
  const named = rest.filter((w) => /^[a-z]+:/.test(w)).map((w) => w.split(':')[0]!);
  const options = entry.options.map((o) => o.name);
  const unknownOption = named.find((n) => !options.includes(n));
  if (unknownOption) return `${entry.name} has no option ${unknownOption}`;
  if (entry.name === 'set' && rest[0] && named.length === 0 && !SET_SETTINGS.includes(rest[0].split('|')[0]!)) return `set has no setting ${rest[0]}`;
  // A command named alone is a reference to it; a form with placeholders (<id>, a|b, …) is a
  // shape: only a concrete command is run through the parser.
  if (rest.length === 0 || (entry.name === 'set' && rest.length === 1) || named.length > 0 || /[<>|…[\]]/.test(text) || refusedExamples.has(words.join(' '))) return undefined;
  const args = readText(entry, rest);
  return isInvalid(args) ? `refused: ${args.invalid}` : undefined;
}

/** The events the Slack adapter listens for, as a manifest subscribes to them. */
export function slackEventsHandled(): string[] {
  const files = sourceFiles('adapters/slack');
  const listened = files.flatMap((f) => findAll(f, /\.event\(\s*'([a-z_]+)'/g).map((x) => x.item));
  const events = new Set([...listened, ...CHANNEL_LIFE_EVENTS]);
  // One `message` listener gets a message event of each kind of conversation.
  if (events.delete('message')) for (const kind of ['channels', 'groups', 'im', 'mpim']) events.add(`message.${kind}`);
  // Bolt's Assistant listens for its two thread events once given these hooks.
  const assistant = readRepoFile('adapters/slack/assistant.ts');
  if (/\bthreadStarted:/.test(assistant)) events.add('assistant_thread_started');
  if (/\bthreadContextChanged:/.test(assistant)) events.add('assistant_thread_context_changed');
  return [...events].sort();
}
