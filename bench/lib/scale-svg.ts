/**
 * The scale curve as a picture (docs/bench-scale.svg, written by `npm run bench -- --only=scale-curve
 * --write-docs`): time, CPU and memory of one merged list against the number of clusters, the same total
 * items at every point. Hand-written SVG (no plotting dependency): three panels side by side, clusters on a
 * log axis, each panel's own linear value axis from 0.
 */

export interface ScalePoint {
  clusters: number;
  items: number;
  /** fleet answer p50, ms */
  fleetMs: number;
  /** every cluster read in parallel unmerged, p50 ms */
  parallelMs: number;
  /** fleet CPU per answer, ms */
  cpuMs: number;
  /** fleet peak RSS − idle RSS during the set, MiB */
  memMiB: number;
}

interface Series {
  label: string;
  color: string;
  values: number[];
}

const W = 300;
const H = 220;
const PAD = { left: 52, right: 12, top: 30, bottom: 40 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** 1, 2, 5 × 10^k at or above x/4: four or so ticks from 0 to the top */
function niceStep(max: number): number {
  const raw = max / 4;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

function panel(x0: number, title: string, unit: string, clusters: number[], series: Series[]): string {
  const finite = series.flatMap((s) => s.values).filter(Number.isFinite);
  const top = Math.max(1e-9, ...finite) * 1.1;
  const step = niceStep(top);
  const yMax = Math.ceil(top / step) * step;
  const pw = W - PAD.left - PAD.right;
  const ph = H - PAD.top - PAD.bottom;
  const lo = Math.log10(Math.min(...clusters));
  const hi = Math.log10(Math.max(...clusters));
  const x = (c: number) => x0 + PAD.left + (hi === lo ? pw / 2 : ((Math.log10(c) - lo) / (hi - lo)) * pw);
  const y = (v: number) => PAD.top + ph - (v / yMax) * ph;
  const out: string[] = [
    `<text x="${x0 + PAD.left}" y="18" font-weight="bold">${esc(title)}</text>`,
    `<rect x="${x0 + PAD.left}" y="${PAD.top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`,
  ];
  for (let v = 0; v <= yMax + step / 2; v += step) {
    out.push(
      `<line x1="${x0 + PAD.left}" x2="${x0 + PAD.left + pw}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`,
      `<text x="${x0 + PAD.left - 4}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${+v.toPrecision(3)}</text>`,
    );
  }
  for (const c of clusters)
    out.push(`<text x="${x(c).toFixed(1)}" y="${PAD.top + ph + 14}" text-anchor="middle">${c}</text>`);
  out.push(
    `<text x="${x0 + PAD.left + pw / 2}" y="${H - 8}" text-anchor="middle">clusters (log)</text>`,
    `<text x="${x0 + 12}" y="${PAD.top + ph / 2}" text-anchor="middle" transform="rotate(-90 ${x0 + 12} ${PAD.top + ph / 2})">${esc(unit)}</text>`,
  );
  series.forEach((s, k) => {
    const pts = clusters
      .map((c, i) => [c, s.values[i]!] as const)
      .filter(([, v]) => Number.isFinite(v))
      .map(([c, v]) => `${x(c).toFixed(1)},${y(v).toFixed(1)}`);
    if (pts.length > 1)
      out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts.join(' ')}"/>`);
    for (const p of pts) {
      const [px, py] = p.split(',');
      out.push(`<circle cx="${px}" cy="${py}" r="3" fill="${s.color}"/>`);
    }
    const ly = PAD.top + 12 + k * 14;
    out.push(
      `<line x1="${x0 + PAD.left + 8}" x2="${x0 + PAD.left + 24}" y1="${ly - 4}" y2="${ly - 4}" stroke="${s.color}" stroke-width="2"/>`,
      `<text x="${x0 + PAD.left + 28}" y="${ly}">${esc(s.label)}</text>`,
    );
  });
  return out.join('\n');
}

/** The SVG text for `points` (one per cluster count, same total items); `caption` goes under the panels. */
export function scaleSvg(points: ScalePoint[], caption: string): string {
  const ps = [...points].sort((a, b) => a.clusters - b.clusters);
  const clusters = ps.map((p) => p.clusters);
  const width = W * 3;
  const height = H + 24;
  const body = [
    panel(0, 'merged list, p50', 'ms', clusters, [
      { label: 'fleet', color: '#1f77b4', values: ps.map((p) => p.fleetMs) },
      { label: 'parallel, unmerged', color: '#ff7f0e', values: ps.map((p) => p.parallelMs) },
    ]),
    panel(W, 'fleet CPU per list', 'ms', clusters, [
      { label: 'fleet', color: '#1f77b4', values: ps.map((p) => p.cpuMs) },
    ]),
    panel(W * 2, 'fleet memory, peak − idle', 'MiB', clusters, [
      { label: 'fleet', color: '#1f77b4', values: ps.map((p) => p.memMiB) },
    ]),
    `<text x="8" y="${height - 6}" fill="#555">${esc(caption)}</text>`,
  ];
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    // the title screen readers announce (and the lint asks for)
    '<title>The merged list against the number of clusters: time, fleet CPU and memory</title>',
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
