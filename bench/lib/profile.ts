/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by where the code lives (a package, a
 * project folder, Node's internals, GC) and the hottest functions. Used by `npm run bench -- --profile`.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** busy = everything but (idle) */
  busyMs: number;
  /** `share`: self time; `onStack`: share of busy time with any frame of the area on the stack */
  byArea: Array<{ area: string; ms: number; share: number; onStack: number }>;
  topFunctions: Array<{ fn: string; where: string; ms: number; share: number }>;
}

/** Where a frame's code lives: `pkg:undici`, `src/upstreams`, `node:internal/…`, `(garbage collector)`. */
export function areaOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (nm) return `pkg:${nm[1]}`;
  if (url.startsWith('node:')) {
    const m = /^node:(?:internal\/)?([^/]+)/.exec(url);
    return `node:${m?.[1] ?? url}`;
  }
  const local = /\/(src\/[^/]+|deploy\/[^/]+|bench)\//.exec(url);
  if (local) return local[1]!;
  return url.replace(/^file:\/\//, '');
}

export function summarizeProfile(path: string, top = 15): ProfileSummary {
  const p = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areas = new Map<string, number>();
  const onStack = new Map<string, number>();
  const fns = new Map<string, { fn: string; where: string; us: number }>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    total += us;
    if (f.functionName === '(idle)') {
      idle += us;
      continue;
    }
    const area = areaOf(f);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const a = areaOf(byId.get(n)!.callFrame);
      if (a === '(root)' || seen.has(a)) continue;
      seen.add(a);
      onStack.set(a, (onStack.get(a) ?? 0) + us);
    }
    const where = f.url
      ? `${f.url.replace(/^file:\/\/.*?\/(node_modules|src|deploy|bench)\//, '$1/')}:${f.lineNumber + 1}`
      : '';
    const key = `${f.functionName}@${where}`;
    const e = fns.get(key) ?? { fn: f.functionName || '(anonymous)', where, us: 0 };
    e.us += us;
    fns.set(key, e);
  }
  const busy = total - idle;
  const share = (us: number) => (busy > 0 ? us / busy : 0);
  return {
    totalMs: total / 1000,
    busyMs: busy / 1000,
    byArea: [...areas]
      .sort((a, b) => b[1] - a[1])
      .map(([area, us]) => ({
        area,
        ms: us / 1000,
        share: share(us),
        onStack: share(onStack.get(area) ?? 0),
      })),
    topFunctions: [...fns.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((e) => ({ fn: e.fn, where: e.where, ms: e.us / 1000, share: share(e.us) })),
  };
}

export function formatProfile(p: ProfileSummary & { path: string; shared: boolean }): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(6);
  const lines = [
    `\n   fleet CPU profile (${p.path}):`,
    `   busy ${p.busyMs.toFixed(0)} ms of ${p.totalMs.toFixed(0)} ms sampled over the case` +
      (p.shared ? ' (the fleet shares its process with other roles: their time is in it too)' : ''),
    '     self  on stack  area',
    ...p.byArea.slice(0, 14).map((a) => `   ${pct(a.share)}    ${pct(a.onStack)}  ${a.area}`),
    '   hottest functions (self time):',
    ...p.topFunctions.map((f) => `   ${pct(f.share)}  ${f.fn}  ${f.where}`),
  ];
  return lines.join('\n');
}
