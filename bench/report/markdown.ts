import type { ResultRow } from './rows.js';
import type { MachineInfo } from './machine.js';

const fmt = (v: number | null): string => (v === null ? '—' : v.toLocaleString('en-US', { maximumFractionDigits: 2 }));
const mark = (met: boolean | null): string => (met === null ? '' : met ? 'yes' : '**no**');
const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** The results as a Markdown table. */
export function resultsTable(rows: readonly ResultRow[]): string {
  const lines = ['| Scenario | Unit | Bridge | Floor | Ratio | Target | Met | Note |', '|---|---|--:|--:|--:|---|---|---|'];
  for (const r of rows) {
    lines.push(
      `| ${cell(r.name)} | ${r.unit} | ${fmt(r.bridge)} | ${fmt(r.floor)} | ${r.ratio === null ? '—' : `${fmt(r.ratio)}×`} | ${cell(r.target)} | ${mark(r.met)} | ${cell(r.note ?? '')} |`,
    );
  }
  return lines.join('\n');
}

/** bench/results/latest.md: machine, date, table, chart, and what missed. */
export function resultsDocument(machine: MachineInfo, date: string, rows: readonly ResultRow[], chartFile: string): string {
  const missed = rows.filter((r) => r.met === false);
  return [
    '# agent-bridge benchmark: latest run',
    '',
    `${date} · ${machine.mode} run · ${machine.cores} cores (${machine.cpuModel}) · Node ${machine.node} · Redis ${machine.redis} · BullMQ ${machine.bullmq}`,
    `Load average at the start ${machine.loadAverageAtStart.join(' / ')}, at the end ${machine.loadAverageAtEnd?.join(' / ') ?? '?'}; ` +
      `machine CPU in use during the run ${machine.cpuBusyPercent ?? '?'}% (everything on the machine, not only the bench: other work shows up in every figure; see docs/benchmark.md).`,
    '',
    resultsTable(rows),
    '',
    `![p50 and p99 latency against arrival rate](${chartFile})`,
    '',
    missed.length === 0 ? 'Every target was met.' : `Targets missed: ${missed.map((r) => r.name).join('; ')}.`,
    '',
    'How the figures are made and how to read them: docs/benchmark.md. Produced by `npm run bench`.',
    '',
  ].join('\n');
}
