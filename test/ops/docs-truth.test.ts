import { existsSync, readdirSync } from 'node:fs';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { discordSchema } from '../../adapters/discord/config.js';
import { ASK_AGENT_CALLBACK_ID } from '../../adapters/slack/ask-shortcut.js';
import { slackSchema } from '../../adapters/slack/config.js';
import { NOTICE_EVENT_TYPE, REPLY_EVENT_TYPE } from '../../adapters/slack/posted-chunks.js';
import { COMMANDS } from '../../src/commands/registry.js';
import { QUOTA_NAMES } from '../../src/commands/settings.js';
import { envSchema } from '../../src/config/schema.js';
import { commandProblem, labelValuesInSource, registeredMetrics, slackEventsHandled, unionMembers } from '../support/code-facts.js';
import { readSlackManifest, yamlListItems } from '../support/slack-manifest.js';
import {
  OPERATOR_DOCS, ROOT, anchors, backticked, codeSpans, commandColumn, documentedPlaygroundRoutes, envExampleAssignments, fencedLines, findAll, phraseInLiterals, readRepoFile, section, sourceFiles, stringLiterals, tableRows, type Found,
} from '../support/docs-reading.js';

/**
 * Audit "the docs tell the truth": what operators and admins read (README.md, .env.example,
 * docs/*.md, the Slack manifests) against what the code does. Each check parses both sides; a
 * failure names the file, the line and the item.
 */

const mdDocs = OPERATOR_DOCS.filter((f) => f.endsWith('.md'));

/** `file:line NAME` lines of the items that fail `ok`, for a failure message that lists them all. */
function offenders(found: readonly Found[], ok: (item: string) => boolean): string[] {
  return found.filter((f) => !ok(f.item)).map((f) => `${f.at} ${f.item}`);
}

// ── 1. Settings ────────────────────────────────────────────────────────────────

const SETTINGS: Record<string, z.ZodType> = { ...envSchema.shape, ...slackSchema.shape, ...discordSchema.shape };
const isSetting = (name: string) => Object.hasOwn(SETTINGS, name);

/** What leaving a variable unset gives. */
function defaultOf(name: string): unknown {
  return SETTINGS[name]!.safeParse(undefined).data;
}

/** A default as the README writes it: `—` for none, the value, `` `value` ``, `0 (off)`. */
function readmeDefault(cell: string): unknown {
  const v = cell.replace(/`/g, '').replace(/ \(off\)$/, '').trim();
  if (v === '—') return undefined;
  if (/^\d+$/.test(v)) return Number(v);
  if (v === 'true' || v === 'false') return v === 'true';
  return v;
}

/**
 * Names in the docs that look like variables and are not settings: each says why. A name here
 * that the docs present as something to set is a drift this list would hide, so keep it short.
 */
const NOT_SETTINGS: Record<string, string> = {
  AGENT_BRIDGE_DEFAULT_REDIS_URL: "tests' override of the default Redis (operations.md says: not an operator setting)",
  MAX_CRASHED_CALLS: 'a constant of src/worker/process-message.ts',
  UPGRADE_FIXTURES: "test/reliability/upgrade-queued.test.ts's choice of releases",
  APPLICATION_ID: "a placeholder in Discord's invite URL",
};
/** Discord gateway events and flags the docs name (SCREAMING_CASE like a variable). */
const DISCORD_WORDS = /^(CHANNEL|GUILD|INTERACTION|MESSAGE|THREAD|SUPPRESS)_[A-Z_]+$/;

const README_SETTINGS = tableRows('README.md', section('README.md', '## Settings')).filter((r) => r.cells[0] !== 'variable');

describe('1. every documented setting is read, with the default the docs give', () => {
  it('every variable .env.example sets is in the config schema', () => {
    expect(offenders(envExampleAssignments(), isSetting), '.env.example names a variable nothing reads').toEqual([]);
  });

  it('every variable of the config schema is in .env.example and in the README settings table', () => {
    const inExample = new Set(envExampleAssignments().map((f) => f.item));
    const inReadme = new Set(README_SETTINGS.flatMap((r) => backticked(r.cells[0]!)));
    const missing = Object.keys(SETTINGS).flatMap((name) => [
      ...(inExample.has(name) ? [] : [`.env.example lacks ${name}`]),
      ...(inReadme.has(name) ? [] : [`README.md "## Settings" lacks ${name}`]),
    ]);
    expect(missing).toEqual([]);
  });

  it('every variable of the schema is read by the config loader (set, it changes something)', () => {
    const loaders = ['src/config/load.ts', 'adapters/slack/config.ts', 'adapters/discord/config.ts'].map(readRepoFile).join('\n');
    expect(Object.keys(SETTINGS).filter((name) => !new RegExp(`\\.${name}\\b`).test(loaders)), 'parsed, then never read').toEqual([]);
  });

  it('every variable of the README settings table is read, and its default is the schema default', () => {
    const problems = README_SETTINGS.flatMap(({ cells, at }) => {
      const names = backticked(cells[0]!);
      const defaults = cells[1]!.split(/,\s*/);
      return names.flatMap((name, i) => {
        if (!isSetting(name)) return [`${at} ${name}: not in the config schema`];
        // One default for several names applies to each; platform defaults ("Slack's") and
        // computed ones ("on without platforms", "all") are words, checked only for "unset".
        const written = readmeDefault(defaults.length === names.length ? defaults[i]! : defaults[0]!);
        const actual = defaultOf(name);
        const comparable = typeof written === 'number' || typeof written === 'boolean' || (typeof written === 'string' && /^[a-z/:.0-9_-]+$/.test(written) && typeof actual === 'string');
        if (written === undefined) return actual === undefined || (Array.isArray(actual) && actual.length === 0) ? [] : [`${at} ${name}: README says no default, the schema gives ${JSON.stringify(actual)}`];
        return comparable && written !== actual ? [`${at} ${name}: README default ${JSON.stringify(written)}, the schema's ${JSON.stringify(actual)}`] : [];
      });
    });
    expect(problems).toEqual([]);
  });

  it('a setting the README says takes 0 (0 = no cap, 0 (off)) accepts 0', () => {
    const zeroRows = README_SETTINGS.filter((r) => /(^|[\s(])0 (=|\(off\))/.test(`${r.cells[1]} ${r.cells[2]}`));
    expect(zeroRows.length).toBeGreaterThan(1);
    const refused = zeroRows.flatMap((r) => backticked(r.cells[0]!).filter((name) => isSetting(name) && !SETTINGS[name]!.safeParse('0').success).map((name) => `${r.at} ${name}: 0 is refused`));
    expect(refused).toEqual([]);
  });

  it(".env.example's values are each variable's default (the base URL excepted: it names the service)", () => {
    const problems = envExampleAssignments()
      .filter((a) => a.value !== '' && a.item !== 'AGENT_API_BASE_URL' && isSetting(a.item))
      .flatMap((a) => {
        const given = SETTINGS[a.item]!.safeParse(a.value);
        if (!given.success) return [`${a.at} ${a.item}=${a.value}: start-up refuses it`];
        return JSON.stringify(given.data) === JSON.stringify(defaultOf(a.item)) ? [] : [`${a.at} ${a.item}=${a.value}: the default is ${JSON.stringify(defaultOf(a.item))}`];
      });
    expect(problems).toEqual([]);
  });

  it('every `NAME=value` the docs show is a value start-up accepts', () => {
    const shown = mdDocs.flatMap((file) => [...codeSpans(file), ...fencedLines(file)].flatMap((span) => findAll(file, /(?:^|\s)([A-Z][A-Z0-9_]*)=(\S*)/g, 0, span.item).map((f) => ({ item: f.item.trim(), at: span.at }))));
    const problems = shown.flatMap(({ item, at }) => {
      const [name, value] = [item.slice(0, item.indexOf('=')), item.slice(item.indexOf('=') + 1)];
      // A placeholder (`<id>`, `…`, `[user:password@]`, `C`) shows a shape, not a value.
      if (!isSetting(name) || /[<…[]|\.\.\.|^[A-Z]$/.test(value)) return [];
      return SETTINGS[name]!.safeParse(value).success ? [] : [`${at} ${item}: start-up refuses it`];
    });
    expect(problems).toEqual([]);
  });

  it('every variable-like name in the docs is a setting (or a known non-setting)', () => {
    const variableLike = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?:_\*|\b)/g;
    const names = [
      ...mdDocs.flatMap((file) => [...codeSpans(file), ...fencedLines(file)].flatMap((span) => findAll(file, variableLike, 0, span.item).map((f) => ({ item: f.item, at: span.at })))),
      ...findAll('.env.example', variableLike, 0),
    ];
    const known = (name: string) => {
      const bare = name.replace(/_\*$/, '');
      if (name.endsWith('_*')) return Object.keys(SETTINGS).some((s) => s.startsWith(`${bare}_`));
      return isSetting(name) || Object.hasOwn(NOT_SETTINGS, name) || DISCORD_WORDS.test(name);
    };
    expect(offenders(names, known), 'the docs name a variable nothing reads').toEqual([]);
  });
});

// ── 2. Metrics ─────────────────────────────────────────────────────────────────

/** `agent_bridge_…` identifiers the code uses that are not metrics (Slack message metadata types …). */
const NOT_METRICS = new Set([REPLY_EVENT_TYPE, NOTICE_EVENT_TYPE, 'agent_bridge_']);
/** prom-client's default metrics, named in the docs by their prefix. */
const DEFAULT_METRIC = /^agent_bridge_(process|nodejs)_/;

/** Each label's values as the code gives them, for the labels with a fixed set. */
const LABEL_VALUES: Record<string, Record<string, string[]>> = {
  agent_bridge_messages_total: { outcome: labelValuesInSource('messages', 'outcome') },
  agent_bridge_ingress_messages_total: { result: ['queued', 'duplicate', ...unionMembers('src/ingress/types.ts', 'DropReason')] },
  agent_bridge_queue_jobs: { state: findAll('src/core/platform-context.ts', /interface QueueCounts \{([^}]+)\}/g).flatMap((f) => [...f.item.matchAll(/(\w+): number/g)].map((m) => m[1]!)) },
  agent_bridge_agent_requests_total: { endpoint: findAll('src/agent-api/client.ts', /operation: '(\w+)'/g).map((f) => f.item) },
  agent_bridge_feedback_total: { rating: ['positive', 'negative'] },
};

describe('2. every documented metric is emitted, and every emitted one documented', () => {
  it('finds label values in the code (the parsing above still works)', () => {
    expect(LABEL_VALUES.agent_bridge_messages_total!.outcome!.sort()).toEqual(['gave_up', 'lost', 'replied', 'withdrawn']);
    expect(LABEL_VALUES.agent_bridge_ingress_messages_total!.result).toContain('redis_unavailable');
    expect(LABEL_VALUES.agent_bridge_queue_jobs!.state).toContain('delayed');
    expect(LABEL_VALUES.agent_bridge_agent_requests_total!.endpoint).toContain('chat');
  });

  it('every metric name the docs give is registered, with the labels they list', async () => {
    const registered = await registeredMetrics();
    const mentions = mdDocs.flatMap((file) => findAll(file, /\b(agent_bridge_[a-z_]+)(\{[^}\n]*\})?/g, 0));
    const problems = mentions.flatMap(({ item, at }) => {
      const [, name, labels] = /^(agent_bridge_[a-z_]+)(?:\{(.*)\})?$/.exec(item)!;
      if (NOT_METRICS.has(name!) || DEFAULT_METRIC.test(name!)) return [];
      const known = registered.get(name!);
      if (!known) return [`${at} ${name}: no such metric`];
      return (labels ?? '').split(',').flatMap((part) => {
        const m = /^\s*([a-z_]+)\s*(?:(!?[=~]+)\s*(.*))?$/.exec(part);
        if (!m || m[1] === undefined || part.trim() === '') return [];
        if (!known.includes(m[1])) return [`${at} ${name}: no label ${m[1]}`];
        const values = LABEL_VALUES[name!]?.[m[1]];
        const given = m[2] === '=' ? [...(m[3] ?? '').matchAll(/"([^"]*)"/g)].map((v) => v[1]!) : [];
        return values ? given.filter((v) => !values.includes(v)).map((v) => `${at} ${name}: ${m[1]}="${v}" never happens`) : [];
      });
    });
    expect(problems).toEqual([]);
  });

  it('the metrics table of docs/operations.md lists every registered metric and every value of its labels', async () => {
    const rows = tableRows('docs/operations.md', section('docs/operations.md', '## Metrics'));
    const problems = [...(await registeredMetrics())].flatMap(([name, labels]) => {
      const row = rows.find((r) => backticked(r.cells[0]!).includes(name));
      if (!row) return [`docs/operations.md "## Metrics" lacks ${name}`];
      const documentedLabels = backticked(row.cells[2] ?? '');
      const missingLabels = labels.filter((l) => !documentedLabels.includes(l)).map((l) => `${row.at} ${name}: label ${l} not listed`);
      const meaning = backticked(row.cells[3] ?? '');
      const missingValues = Object.entries(LABEL_VALUES[name] ?? {}).flatMap(([label, values]) =>
        values.filter((v) => !meaning.includes(v)).map((v) => `${row.at} ${name}: ${label} value ${v} not described`),
      );
      return [...missingLabels, ...missingValues];
    });
    expect(problems).toEqual([]);
  });

  it("the error kinds operations.md gives as agent_requests_total's status are the client's", () => {
    const row = tableRows('docs/operations.md', section('docs/operations.md', '## Metrics')).find((r) => r.cells[0] === '`agent_bridge_agent_requests_total`');
    const kinds = backticked(/error kind[^(]*\(([^)]*)\)/.exec(row?.cells[3] ?? '')?.[1] ?? '');
    expect(kinds.length, 'docs/operations.md names some error kinds of agent_bridge_agent_requests_total').toBeGreaterThan(0);
    expect(kinds.filter((k) => !unionMembers('src/core/errors.ts', 'ErrorKind').includes(k)).map((k) => `${row!.at} status ${k}: no such error kind`)).toEqual([]);
  });

  it("the README's list of outcomes is the code's", () => {
    const [list] = findAll('README.md', /agent_bridge_messages_total\{platform,outcome\}` \(outcome ([^:]+):/g);
    expect(list, 'README.md names the outcomes after agent_bridge_messages_total').toBeDefined();
    expect(backticked(list!.item).sort(), list!.at).toEqual([...LABEL_VALUES.agent_bridge_messages_total!.outcome!].sort());
  });
});

// ── 3. Commands and the Slack manifests ────────────────────────────────────────

const COMMAND_NAMES = COMMANDS.map((c) => c.name as string);
/** Commands the docs show on purpose as refused (the refusal is what they document). */
const REFUSED_EXAMPLES = new Set(['set errors loud']);

describe('3. every documented command exists; the manifests match the Slack adapter', () => {
  it('the command tables of README.md, docs/slack.md and docs/discord.md list every command, each one real', () => {
    const tables = [commandColumn('README.md', '### Admin commands'), commandColumn('docs/slack.md', '## 6. `/agent`'), commandColumn('docs/discord.md', '### `/agent` (admins)')];
    const problems = tables.flatMap((rows) => {
      const at = rows[0]?.at.split(':')[0] ?? '?';
      const missing = COMMAND_NAMES.filter((n) => !rows.some((r) => r.item.split(' ')[0] === n)).map((n) => `${at} lacks ${n}`);
      const wrong = rows.flatMap((r) => (commandProblem(r.item, REFUSED_EXAMPLES) ? [`${r.at} ${r.item}: ${commandProblem(r.item, REFUSED_EXAMPLES)}`] : []));
      return [...missing, ...wrong];
    });
    expect(problems).toEqual([]);
  });

  it('every `/agent …` in the docs is a command, and a concrete one is accepted', () => {
    const spans = mdDocs.flatMap((f) => codeSpans(f)).filter((s) => /^\/agent(\s|$)/.test(s.item));
    expect(spans.length).toBeGreaterThan(30);
    const problems = spans.flatMap((s) => {
      const p = commandProblem(s.item.replace(/^\/agent/, ''), REFUSED_EXAMPLES);
      return p ? [`${s.at} ${s.item}: ${p}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it("the README's quota names are the registry's", () => {
    const row = commandColumn('README.md', '### Admin commands').find((r) => r.item.startsWith('set quota'));
    expect(row, 'README.md lists /agent set quota').toBeDefined();
    expect(/<([^>]+)>/.exec(row!.item)![1]!.split('|'), row!.at).toEqual(Object.keys(QUOTA_NAMES));
  });

  it("docs/discord.md's invite URL asks for exactly the permissions its table explains", () => {
    const invite = readRepoFile('docs/discord.md');
    const asked = BigInt(/oauth2\/authorize\?[^\s]*permissions=(\d+)/.exec(invite)![1]!);
    const flag = (words: string) => {
      const key = Object.keys(PermissionFlagsBits).find((k) => [words.replace(/ /g, ''), words.replace(/ /g, '').replace(/s$/, '')].some((w) => w.toLowerCase() === k.toLowerCase()));
      if (!key) throw new Error(`docs/discord.md: no Discord permission "${words}"`);
      return PermissionFlagsBits[key as keyof typeof PermissionFlagsBits];
    };
    const rows = tableRows('docs/discord.md', section('docs/discord.md', '## 2. Invite the bot')).filter((r) => r.cells[0] !== 'permission');
    const explained = rows.flatMap((r) => r.cells[0]!.split(/,\s*/)).reduce((sum, words) => sum | flag(words), 0n);
    expect(explained.toString(), 'the permissions integer of the invite URL against the table').toBe(asked.toString());
  });

  describe.each(['manifest.http.yaml', 'manifest.socket-mode.yaml'])('adapters/slack/%s', (file) => {
    const yaml = readSlackManifest(file);
    it('subscribes to exactly the events the adapter listens for (an event nobody handles costs deliveries)', () => {
      expect(yamlListItems(yaml, 'bot_events').sort()).toEqual(slackEventsHandled());
    });
    it('declares the slash command of the default SLACK_COMMAND and the shortcut the adapter answers', () => {
      expect(yaml).toContain(`- command: ${String(defaultOf('SLACK_COMMAND'))}\n`);
      expect(yaml).toMatch(new RegExp(`- name: Ask the agent\\n\\s+type: message\\n\\s+callback_id: ${ASK_AGENT_CALLBACK_ID}\\n`));
    });
    it('grants every scope docs/slack.md names', () => {
      const scopes = yamlListItems(yaml, 'bot');
      const named = codeSpans('docs/slack.md').filter((s) => /^(app_mentions|channels|groups|im|mpim|chat|reactions|users|files|assistant):[a-z.]+$/.test(s.item));
      expect(offenders(named, (s) => scopes.includes(s))).toEqual([]);
    });
  });
});

describe('3b. the playground API routes are the documented ones', () => {
  it("docs/playground.md's routes table lists every route of adapters/web/api.ts, and only those", () => {
    const code = findAll('adapters/web/api.ts', /\bapi\.(get|post)\('\/([a-z-]+)'/g, 0).map((f) => f.item.replace(/^api\.(get|post)\('\/([a-z-]+)'$/, (_, m: string, n: string) => `${m.toUpperCase()} ${n}`));
    const documented = documentedPlaygroundRoutes();
    expect(code.length).toBeGreaterThan(10);
    expect([...code.filter((r) => !documented.some((d) => d.item === r)).map((r) => `docs/playground.md "## Routes" lacks ${r}`), ...offenders(documented, (r) => code.includes(r))]).toEqual([]);
  });
});

// ── 4. Scripts, paths and Redis keys ───────────────────────────────────────────

/** Every string literal of the source, a template's `${…}` parts as holes. */
const LITERALS = stringLiterals(sourceFiles('src', 'adapters', 'bin'));

/** Paths in the docs that the repository does not hold on purpose: generated, or on the host. */
const GENERATED = /^(test\/artifacts\/|bench\/results\/|dist\/|\/usr\/)|^bin\/agent-bridge\.js$/;

describe('4. every npm script, file and Redis key the docs name exists', () => {
  it('every `npm run X` is a script of package.json', () => {
    const scripts = Object.keys((JSON.parse(readRepoFile('package.json')) as { scripts: Record<string, string> }).scripts);
    const runs = [...OPERATOR_DOCS, 'docs/benchmark.md'].flatMap((f) => findAll(f, /\bnpm run ([a-z][a-z0-9:-]*)/g));
    expect(offenders(runs, (s) => scripts.includes(s))).toEqual([]);
  });

  it('every relative Markdown link points at a file (and a heading) that exists', () => {
    const links = mdDocs.flatMap((f) => findAll(f, /\]\(([^)\s]+)\)/g).map((l) => ({ ...l, from: f })));
    const problems = links.flatMap(({ item, at, from }) => {
      if (/^[a-z]+:/.test(item)) return [];
      const [path, anchor] = item.split('#');
      const target = path ? join(dirname(from), path) : from;
      if (!existsSync(join(ROOT, target))) return [`${at} ${item}: no file ${target}`];
      return anchor && target.endsWith('.md') && !anchors(target).includes(anchor) ? [`${at} ${item}: no heading #${anchor} in ${target}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it('every repository path in code spans exists (a glob matches something)', () => {
    const paths = mdDocs.flatMap((f) => codeSpans(f).flatMap((s) => findAll(f, /(?:^|[\s(])((?:src|adapters|test|bench|docs|bin)\/[A-Za-z0-9_./*<>-]*[A-Za-z0-9_*/])/g, 1, s.item).map((p) => ({ item: p.item, at: s.at }))));
    expect(paths.length).toBeGreaterThan(40);
    const exists = (p: string) => {
      if (GENERATED.test(p) || p.includes('<')) return true;
      if (!p.includes('*')) return existsSync(join(ROOT, p));
      const [dir, pattern] = [dirname(p), new RegExp(`^${p.split('/').pop()!.replace(/\./g, '\\.').replace(/\*/g, '.*')}$`)];
      return existsSync(join(ROOT, dir)) && readdirSync(join(ROOT, dir)).some((n) => pattern.test(n));
    };
    expect(offenders(paths, exists)).toEqual([]);
  });

  it('every Redis key the docs name (`<QUEUE_PREFIX>:chat:bindings` …) is built of words the code uses', () => {
    const keys = mdDocs.flatMap((f) => codeSpans(f)).filter((s) => /^[<${]*QUEUE_PREFIX[>}]*:/.test(s.item));
    expect(keys.length).toBeGreaterThan(10);
    const texts = LITERALS.flat().filter((t): t is string => t !== null);
    const problems = keys.flatMap(({ item, at }) =>
      item
        .split(':')
        .slice(1)
        .filter((word) => /^[a-z][a-z-]{2,}$/.test(word))
        .filter((word) => !texts.some((t) => new RegExp(`(^|:)${word}(:|$)`).test(t)))
        .map((word) => `${at} ${item}: no key part "${word}" in the code`),
    );
    expect(problems).toEqual([]);
  });
});

// ── 5. Log lines operators grep for ────────────────────────────────────────────

/** Lines that Bolt logs itself, as the docs quote them. */
const BOLT_LINES = new Set(['Request verification failed']);

/** The log lines the docs quote: operations.md's "## Logs" and every `log \`…\`` of a troubleshooting table. */
function documentedLogLines(): Found[] {
  const logsSection = section('docs/operations.md', '## Logs');
  const inLogs = findAll('docs/operations.md', /`([^`\n]+(?:\n[^`\n]+)?)`/g, 1, logsSection).filter((f) => f.item.includes(' ') && !f.item.startsWith('/'));
  const afterLog = mdDocs.flatMap((f) => findAll(f, /\blogs? `([^`]+)`/g));
  const saidByLog = mdDocs.flatMap((f) => findAll(f, /\b(?:[Tt]he log says|logs? says) "([^"]+)"/g));
  return [...inLogs, ...afterLog, ...saidByLog].map((f) => ({ ...f, item: f.item.replace(/\s+/g, ' ') }));
}

describe('5. the log lines the docs quote are the ones the code writes', () => {
  it('each quoted line (its parts around …) is in the code', () => {
    const lines = documentedLogLines();
    expect(lines.length).toBeGreaterThan(20);
    const problems = lines.flatMap(({ item, at }) =>
      item
        .split(/…|\.\.\./)
        .map((part) => part.trim().replace(/^[:,]\s*/, ''))
        .filter((part) => part.length >= 8 && !BOLT_LINES.has(part) && !phraseInLiterals(part, LITERALS))
        .map((part) => `${at} "${part}"`),
    );
    expect(problems).toEqual([]);
  });
});
