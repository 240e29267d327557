import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Small readers of what operators read (README.md, .env.example, docs/*.md, the Slack manifests)
 * and of the source, for test/ops/docs-truth.test.ts. Plain text parsing: each returns where it
 * found an item (file and line) so a failure names both.
 */

export const ROOT = new URL('../../', import.meta.url).pathname;

/** The files an operator or admin reads, as the audit scopes them. */
export const OPERATOR_DOCS = ['README.md', '.env.example', 'docs/operations.md', 'docs/slack.md', 'docs/discord.md', 'docs/playground.md', 'docs/ARCHITECTURE.md'] as const;

export interface Found {
  /** What was found (a variable, a metric, a command …). */
  item: string;
  /** `file:line`, for the failure message. */
  at: string;
}

export function readRepoFile(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** Every match of `pattern` (global) in `file`, with the line it is on; `group` picks the captured part. */
export function findAll(file: string, pattern: RegExp, group = 1, text = readRepoFile(file)): Found[] {
  const out: Found[] = [];
  for (const m of text.matchAll(pattern)) {
    const line = text.slice(0, m.index).split('\n').length;
    out.push({ item: m[group] ?? m[0], at: `${file}:${line}` });
  }
  return out;
}

/** Inline code spans (`…`) of a Markdown text, spaces collapsed and a table's `\|` read as `|`. */
export function codeSpans(file: string): Found[] {
  return findAll(file, /`([^`\n]+(?:\n[^`\n]+)?)`/g).map((f) => ({ ...f, item: f.item.replace(/\s+/g, ' ').replace(/\\\|/g, '|') }));
}

/** The lines of a Markdown text's fenced blocks (```), each with where it is. */
export function fencedLines(file: string): Found[] {
  let inside = false;
  return readRepoFile(file).split('\n').flatMap((line, i) => {
    if (line.trimStart().startsWith('```')) {
      inside = !inside;
      return [];
    }
    return inside ? [{ item: line, at: `${file}:${i + 1}` }] : [];
  });
}

/** The section of a Markdown file under `heading` (up to the next heading of the same or a higher level). */
export function section(file: string, heading: string): string {
  const text = readRepoFile(file);
  const level = /^#+/.exec(heading)![0].length;
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level}} `));
  // Keep the line numbers of the whole file: pad the section with the newlines before it.
  return '\n'.repeat(text.slice(0, start + 1).split('\n').length) + (end < 0 ? rest : rest.slice(0, end));
}

/** The rows of the Markdown tables of a text, as cells (backslash-escaped pipes kept as `|`). */
export function tableRows(file: string, text: string): { cells: string[]; at: string }[] {
  return text.split('\n').flatMap((line, i) => {
    if (!line.startsWith('|') || /^\|[-| :]+\|$/.test(line)) return [];
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim().replace(/\\\|/g, '|'));
    return [{ cells, at: `${file}:${i + 1}` }];
  });
}

/** The names in backticks of a table cell: `` `A`, `B` `` → [A, B]. */
export function backticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

/** Every assignment line of .env.example, commented out (`# NAME=…`) or not. */
export function envExampleAssignments(): (Found & { value: string; commented: boolean })[] {
  const text = readRepoFile('.env.example');
  return [...text.matchAll(/^(# ?)?([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => ({
    item: m[2]!,
    at: `.env.example:${text.slice(0, m.index).split('\n').length}`,
    value: m[3]!.trim(),
    commented: m[1] !== undefined,
  }));
}

/** The first code span of each row of a section's tables. */
export function commandColumn(file: string, heading: string): Found[] {
  return tableRows(file, section(file, heading)).flatMap((r) => {
    const [first] = backticked(r.cells[0]!);
    return first === undefined ? [] : [{ item: first.replace(/^\/agent\s*/, ''), at: r.at }];
  });
}

/** The playground API's routes as docs/playground.md's table lists them: `GET /playground/api/info`, `instances` … */
export function documentedPlaygroundRoutes(): Found[] {
  return tableRows('docs/playground.md', section('docs/playground.md', '## Routes')).flatMap(({ cells, at }) => {
    let method = '';
    return backticked(cells[0]!).flatMap((span) => {
      const full = /^(GET|POST) \/playground\/api\/([a-z-]+)$/.exec(span);
      if (full) method = full[1]!;
      const name = full ? full[2] : method && /^[a-z-]+$/.test(span) ? span : undefined;
      return name ? [{ item: `${method} ${name}`, at }] : [];
    });
  });
}

/** Heading anchors of a Markdown file, as GitHub makes them. */
export function anchors(file: string): string[] {
  return findAll(file, /^#+ (.+)$/gm).map((h) =>
    h.item.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'),
  );
}

/** Source files (`.ts`) under the given directories, relative to the repository. */
export function sourceFiles(...dirs: string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) return name === 'node_modules' || name === 'public' ? [] : walk(path);
      return path.endsWith('.ts') ? [relative('.', path)] : [];
    });
  return dirs.flatMap(walk);
}

/** The string literals of the source ('…', "…", `…`); a template's `${…}` parts become `null` holes. */
export function stringLiterals(files: readonly string[]): (string | null)[][] {
  const out: (string | null)[][] = [];
  for (const file of files) {
    const text = withoutComments(readRepoFile(file));
    for (const m of text.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)) {
      const body = m[1] ?? m[2] ?? m[3]!;
      if (m[3] === undefined) out.push([body.replace(/\\(.)/g, '$1')]);
      else out.push(body.split(/\$\{(?:[^{}]|\{[^{}]*\})*\}/).flatMap((part, i) => (i === 0 ? [part] : [null, part])));
    }
  }
  return out;
}

/** The source without its comments (their backticks and apostrophes are not strings). */
function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .map((line) => (/^\s*\/\//.test(line) ? '' : line.replace(/\s\/\/\s.*$/, '')))
    .join('\n');
}

/**
 * Whether `phrase` is what one of the literals logs, a `${…}` hole standing for any text: the
 * phrase may start inside a literal's text and stop inside a later one. Most of the phrase (at
 * least 60% of it) must be the literal's own text, so a hole cannot stand for the whole of it.
 */
export function phraseInLiterals(phrase: string, literals: readonly (string | null)[][]): boolean {
  const enough = Math.ceil(phrase.length * 0.6);
  const plain = literals.flatMap((parts) => parts.filter((p): p is string => p !== null && p.length >= 8));
  const literal = (s: string) => plain.some((p) => p.startsWith(s));
  return literals.some((parts) => {
    const texts = parts.filter((p): p is string => p !== null);
    if (texts.some((t) => t.includes(phrase))) return true;
    for (let i = 0; i < texts.length - 1; i++) {
      for (let cut = 0; cut < texts[i]!.length; cut++) {
        const head = texts[i]!.slice(cut);
        if (phrase.startsWith(head) && matchedAfterHole(phrase.slice(head.length), texts.slice(i + 1), literal) + head.length >= enough) return true;
      }
    }
    return false;
  });
}

/**
 * `rest` as a hole's text, then the texts in order with holes between, the last possibly cut
 * short: how many of its characters literals account for (the best split). A hole's text counts
 * when it is (the start of) another literal: `Slack said ${GONE_WORDS[code]}` names its words.
 */
function matchedAfterHole(rest: string, texts: readonly string[], literal: (s: string) => boolean): number {
  const [next, ...later] = texts;
  const hole = (s: string) => (s.length >= 8 && literal(s) ? s.length : 0);
  let best = hole(rest);
  if (next === undefined) return best;
  for (let at = 0; at <= rest.length; at++) {
    const tail = rest.slice(at);
    if (tail !== '' && next.startsWith(tail)) best = Math.max(best, hole(rest.slice(0, at)) + tail.length);
    if (tail.startsWith(next)) best = Math.max(best, hole(rest.slice(0, at)) + next.length + matchedAfterHole(tail.slice(next.length), later, literal));
  }
  return best;
}
