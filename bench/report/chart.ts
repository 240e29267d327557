/** A series of (x, y) points for the latency chart. */
export interface Series {
  label: string;
  color: string;
  dashed?: boolean;
  points: Array<{ x: number; y: number }>;
}

const W = 640;
const H = 380;
const M = { left: 60, right: 170, top: 40, bottom: 50 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** 1, 2, 5 × 10^n from below `lo` to above `hi`: the ticks of a log axis. */
function logTicks(lo: number, hi: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) ticks.push(m * 10 ** e);
  }
  const first = Math.max(0, ticks.findIndex((t) => t > lo) - 1);
  const last = ticks.findIndex((t) => t >= hi);
  return ticks.slice(first, last === -1 ? undefined : last + 1);
}

/**
 * A plain SVG line chart (no library): latency (ms, log scale, so that a backlog at one rate
 * does not flatten the others) against arrival rate (messages/s), ticks at the measured rates.
 */
export function latencyChart(title: string, series: readonly Series[]): string {
  const xs = [...new Set(series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
  const ys = series.flatMap((s) => s.points.map((p) => p.y)).filter((y) => Number.isFinite(y) && y > 0);
  const yTicks = logTicks(Math.min(1, ...ys), Math.max(10, ...ys));
  const yLo = yTicks[0]!;
  const yHi = yTicks.at(-1)!;
  const xMax = Math.max(1, ...xs) * 1.1;
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const px = (x: number) => M.left + (x / xMax) * pw;
  const py = (y: number) => M.top + ph - ((Math.log10(Math.max(y, yLo)) - Math.log10(yLo)) / (Math.log10(yHi) - Math.log10(yLo))) * ph;

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${M.left}" y="22" font-size="14" font-weight="bold">${esc(title)}</text>`,
  ];
  for (const y of yTicks) {
    out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${py(y)}" y2="${py(y)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.left - 8}" y="${py(y) + 4}" text-anchor="end">${y}</text>`);
  }
  for (const x of [0, ...xs]) {
    out.push(`<line x1="${px(x)}" x2="${px(x)}" y1="${M.top + ph}" y2="${M.top + ph + 5}" stroke="#333"/>`);
    out.push(`<text x="${px(x)}" y="${M.top + ph + 18}" text-anchor="middle">${x}</text>`);
  }
  out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${M.top + ph}" y2="${M.top + ph}" stroke="#333"/>`);
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}" stroke="#333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 10}" text-anchor="middle">arrival rate (messages/s, open loop)</text>`);
  out.push(`<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">ingress → reply posted (ms, log scale)</text>`);

  series.forEach((s, i) => {
    const pts = s.points.filter((p) => Number.isFinite(p.y));
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2"${dash} points="${pts.map((p) => `${px(p.x)},${py(p.y)}`).join(' ')}"/>`);
    for (const p of pts) {
      out.push(`<circle cx="${px(p.x)}" cy="${py(p.y)}" r="3.5" fill="${s.color}"><title>${esc(s.label)} at ${p.x}/s: ${p.y.toFixed(2)} ms</title></circle>`);
    }
    const ly = M.top + 10 + i * 20;
    const lx = M.left + pw + 16;
    out.push(`<line x1="${lx}" x2="${lx + 28}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${dash}/>`);
    out.push(`<text x="${lx + 34}" y="${ly + 4}">${esc(s.label)}</text>`);
  });
  out.push('</svg>', '');
  return out.join('\n');
}
