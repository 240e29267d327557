/**
 * Summarises V8 CPU profiles (`node --cpu-prof`, or `BENCH_PROFILE=1 npm run bench`):
 * `npx tsx bench/profile-summary.ts bench/results/s1-bridge-worker.cpuprofile [top=25]`.
 * Prints the functions with the most self time, and the same grouped by package or source dir.
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** `bullmq`, `ioredis`, `undici` (node:internal/deps/undici), `src/queue`, `(gc)`, ... */
export function groupOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const internal = /node:internal\/deps\/([^/]+)/.exec(url) ?? /^node:internal\/([^/]+)/.exec(url);
  if (internal) return `node:${internal[1]}`;
  const own = /\/work\/[^/]+\/((?:src|adapters|test|bench)\/[^/]+)/.exec(url);
  if (own) return own[1]!.replace(/\.ts$/, '');
  return url.replace(/^file:\/\//, '').split('/').slice(-2).join('/');
}

export function summarise(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  // Self time per node from samples and their time deltas (µs).
  const self = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + (deltas[i] ?? 0));
  let idle = 0;
  for (const [id, us] of self) if (byId.get(id)?.callFrame.functionName === '(idle)') idle += us;
  // Percentages are of busy time: a worker that waits between batches is not slower for it.
  const total = [...self.values()].reduce((a, b) => a + b, 0) - idle || 1;

  const fns = new Map<string, number>();
  const groups = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    if (functionName === '(idle)') continue;
    const file = url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '').replace(/^\/work\/[^/]+\//, '');
    const key = `${functionName || '(anonymous)'}  ${file ? `${file}:${lineNumber + 1}` : ''}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + us);
    const g = groupOf(url, functionName);
    groups.set(g, (groups.get(g) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  const lines = [`busy ${(total / 1e6).toFixed(2)} s (idle ${(idle / 1e6).toFixed(2)} s left out); percentages of busy time`, '', 'self time by function:'];
  for (const [k, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${k}`);
  lines.push('', 'self time by package / source dir:');
  for (const [k, us] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${pct(us)}  ${k}`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, topArg] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile> [top]');
    process.exit(1);
  }
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  console.log(summarise(profile, Number(topArg ?? 25)));
}
