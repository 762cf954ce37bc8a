/**
 * Before/after of issue 33's goal rows: two trees' benches run alternately on the same machine, and per row
 * the base's median, the current one's, the change and every round's figure.
 *
 *   node --import tsx bench/lib/goals-ab.ts --base=<git ref> [--head=<git ref>] [--rounds=3]
 *        [--only=<cases>] [--bench-args="--real …"] [--out=<file.json>] [--keep]
 *
 * --base: a commit (branch, tag, sha) of this repository, git-archived into a directory under the system's
 * temporary directory, node_modules (and the real test bed's binaries, .cache/testbed/bin) linked from
 * this tree; its own bench runs there, so it measures its own src/ with its own harness. --head: the same
 * for the other side; without it, this working tree as it is (uncommitted changes included).
 * Each round runs `bench/run.ts --quick` (or --only=…) once per side, the order swapped every other round
 * (base first in odd rounds), so a drift of the machine's load over the run falls on both sides alike.
 * The rows come from the run's --json file when its bench has the flag, else from its output (the
 * BENCH_JSON line's issue33 checks, else the printed goals table: bench/lib/goals-json.ts).
 * Default 3 rounds; each run's output stays in the work directory (printed at the end).
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type GoalRowJson, type GoalsJson, rowKey, rowsFromOutput } from './goals-json.ts';
import { ISSUE33_ROWS } from './goals33.ts';
import { table } from './report.ts';
import { median } from './stats.ts';

const HERE = resolve(fileURLToPath(new URL('../..', import.meta.url)));

interface Args {
  base: string;
  head?: string;
  rounds: number;
  only?: string;
  benchArgs: string[];
  out?: string;
  keep: boolean;
  timeoutS: number;
}

function parseArgs(argv: string[]): Args {
  const flags = new Map<string, string>();
  for (const a of argv) {
    const m = /^--([a-z-]+)(?:=([\s\S]*))?$/.exec(a);
    if (!m) throw new Error(`goals-ab: unknown argument "${a}"`);
    flags.set(m[1]!, m[2] ?? 'true');
  }
  const known = ['base', 'head', 'rounds', 'only', 'bench-args', 'out', 'keep', 'timeout'];
  for (const k of flags.keys())
    if (!known.includes(k)) throw new Error(`goals-ab: unknown flag --${k} (known: --${known.join(' --')})`);
  const base = flags.get('base');
  if (!base || base === 'true') throw new Error('goals-ab: --base=<git ref> is required');
  const rounds = Number(flags.get('rounds') ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('goals-ab: --rounds must be an integer ≥ 1');
  return {
    base,
    head: flags.get('head'),
    rounds,
    only: flags.get('only'),
    benchArgs: (flags.get('bench-args') ?? '').split(/\s+/).filter(Boolean),
    out: flags.get('out'),
    keep: flags.has('keep'),
    timeoutS: Number(flags.get('timeout') ?? 900),
  };
}

const git = (...a: string[]) => execFileSync('git', a, { cwd: HERE, encoding: 'utf8' }).trim();

interface Side {
  name: 'base' | 'current';
  /** what it is, for the report: a ref and its commit, or the working tree */
  label: string;
  dir: string;
  /** its bench has --json (else its rows are read from its output) */
  json: boolean;
}

/** `ref` archived into `dir`, with this tree's node_modules and test bed binaries linked in */
function materialize(ref: string, work: string): { dir: string; sha: string } {
  const sha = git('rev-parse', '--verify', `${ref}^{commit}`);
  const dir = join(work, `tree-${sha.slice(0, 10)}`);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive --format=tar ${sha} | tar -x -C "${dir}"`], { cwd: HERE });
    symlinkSync(resolve(HERE, 'node_modules'), join(dir, 'node_modules'));
    const bed = resolve(HERE, '.cache/testbed/bin');
    if (existsSync(bed)) {
      mkdirSync(join(dir, '.cache/testbed'), { recursive: true });
      symlinkSync(bed, join(dir, '.cache/testbed/bin'));
    }
  }
  return { dir, sha };
}

const hasJsonFlag = (dir: string) => {
  try {
    return /'json'/.test(readFileSync(join(dir, 'bench/lib/options.ts'), 'utf8'));
  } catch {
    return false;
  }
};

interface Run {
  side: Side['name'];
  round: number;
  code: number | null;
  wallS: number;
  log: string;
  rows: GoalRowJson[];
  from: string;
}

/** the bench running now (its own process group): ended with this script, however it ends */
let running: number | undefined;
const killRunning = () => {
  if (running === undefined) return;
  try {
    process.kill(-running, 'SIGKILL');
  } catch {
    // gone already
  }
};

function runBench(side: Side, round: number, a: Args, work: string): Promise<Run> {
  const log = join(work, `${side.name}-${round}.log`);
  const jsonFile = join(work, `${side.name}-${round}.json`);
  const args = [
    '--import',
    'tsx',
    'bench/run.ts',
    '--quick',
    ...(a.only ? [`--only=${a.only}`] : []),
    ...a.benchArgs,
    ...(side.json ? [`--json=${jsonFile}`] : []),
  ];
  const t0 = performance.now();
  return new Promise((done) => {
    const p = spawn(process.execPath, args, {
      cwd: side.dir,
      // BENCH_ONLY from the caller's shell would select other cases than --only says
      env: { ...process.env, BENCH_ONLY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    running = p.pid;
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.stderr.on('data', (d) => {
      out += d;
    });
    // the whole process group: the bench's helper processes go with it
    const timer = setTimeout(() => {
      try {
        process.kill(-p.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    }, a.timeoutS * 1000);
    p.on('close', (code) => {
      clearTimeout(timer);
      running = undefined;
      writeFileSync(log, out);
      let rows: GoalRowJson[] = [];
      let from = 'none';
      if (side.json && existsSync(jsonFile)) {
        rows = (JSON.parse(readFileSync(jsonFile, 'utf8')) as GoalsJson).rows;
        from = '--json';
      } else ({ rows, from } = rowsFromOutput(out));
      done({ side: side.name, round, code, wallS: (performance.now() - t0) / 1000, log, rows, from });
    });
  });
}

const fmtV = (v: number | undefined, unit: string) =>
  v === undefined || !Number.isFinite(v)
    ? '-'
    : unit === 'ms'
      ? `${v >= 0 ? '+' : ''}${v.toFixed(2)} ms`
      : `${v.toFixed(2)}×`;

/** the change from base to current: a ratio row as a percentage, an ms row as the difference */
const change = (b: number, c: number, unit: string) =>
  !Number.isFinite(b) || !Number.isFinite(c) ? Number.NaN : unit === 'ms' ? c - b : (c / b - 1) * 100;
const fmtChange = (x: number, unit: string) =>
  !Number.isFinite(x)
    ? '-'
    : unit === 'ms'
      ? `${x >= 0 ? '+' : ''}${x.toFixed(2)} ms`
      : `${x >= 0 ? '+' : ''}${x.toFixed(0)}%`;

export interface AbRow {
  key: string;
  row: string;
  case: string;
  where: string;
  unit: '×' | 'ms';
  base: number[];
  current: number[];
  baseMedian: number;
  currentMedian: number;
  /** change of the medians: % for a ratio, ms for an ms row */
  change: number;
  /** median of the per-round paired changes */
  pairedChange: number;
  /**
   * the current median within the base rounds' range or the reverse: no change told from the noise;
   * undefined when neither side has two rounds (no range)
   */
  withinNoise: boolean | undefined;
  currentOk: string;
}

/**
 * A row's `where` without what a run adds to it now and then (merged-watch's burst says ", the simulated
 * clusters the limit" when they were): the shortest `where` of the same row and case that it extends.
 */
function canonical(runs: Run[]): Run[] {
  const all = runs.flatMap((r) => r.rows);
  const base = (x: GoalRowJson) =>
    all
      .filter((y) => y.row === x.row && y.case === x.case && x.where.startsWith(`${y.where},`))
      .map((y) => y.where)
      .sort((a, b) => a.length - b.length)[0] ?? x.where;
  return runs.map((r) => ({ ...r, rows: r.rows.map((x) => ({ ...x, where: base(x) })) }));
}

export function compareRuns(measured: Run[], rounds: number): AbRow[] {
  const runs = canonical(measured);
  const keys = new Map<string, GoalRowJson>();
  for (const r of runs) for (const x of r.rows) if (!keys.has(rowKey(x))) keys.set(rowKey(x), x);
  const order = (k: GoalRowJson) => ISSUE33_ROWS.findIndex((r) => r.id === k.row);
  const out: AbRow[] = [];
  for (const [key, x] of [...keys].sort((a, b) => order(a[1]) - order(b[1]))) {
    const per = (side: Side['name']) =>
      Array.from({ length: rounds }, (_, i) => {
        const run = runs.find((r) => r.side === side && r.round === i + 1);
        const v = run?.rows.find((y) => rowKey(y) === key)?.value;
        return typeof v === 'number' ? v : Number.NaN;
      });
    const base = per('base');
    const current = per('current');
    const fin = (xs: number[]) => xs.filter(Number.isFinite);
    const bm = median(fin(base));
    const cm = median(fin(current));
    const paired = base.map((b, i) => change(b, current[i]!, x.unit)).filter(Number.isFinite);
    const inRange = (v: number, xs: number[]) =>
      fin(xs).length > 0 && v >= Math.min(...fin(xs)) && v <= Math.max(...fin(xs));
    const oks = runs
      .filter((r) => r.side === 'current')
      .map((r) => r.rows.find((y) => rowKey(y) === key)?.ok)
      .filter((o) => o !== undefined && o !== null);
    out.push({
      key,
      row: x.row,
      case: x.case,
      where: x.where,
      unit: x.unit,
      base,
      current,
      baseMedian: bm,
      currentMedian: cm,
      change: change(bm, cm, x.unit),
      pairedChange: median(paired),
      withinNoise:
        fin(base).length < 2 && fin(current).length < 2
          ? undefined
          : inRange(cm, base) || inRange(bm, current),
      currentOk: oks.length ? `${oks.filter(Boolean).length}/${oks.length} OK` : '-',
    });
  }
  return out;
}

export function formatAb(rows: AbRow[]): string {
  const goal = (id: string) => ISSUE33_ROWS.find((r) => r.id === id)?.goal ?? id;
  const lines = [
    table(
      [
        'row (case, where)',
        'base median',
        'current median',
        'change',
        'paired change',
        'noise',
        'base rounds',
        'current rounds',
        'current',
      ],
      rows.map((r) => [
        `${r.row} (${r.case}, ${r.where})`,
        fmtV(r.baseMedian, r.unit),
        fmtV(r.currentMedian, r.unit),
        fmtChange(r.change, r.unit),
        fmtChange(r.pairedChange, r.unit),
        r.withinNoise === undefined ? '-' : r.withinNoise ? 'within' : 'OUTSIDE',
        r.base.map((v) => (Number.isFinite(v) ? v.toFixed(2) : '-')).join(' '),
        r.current.map((v) => (Number.isFinite(v) ? v.toFixed(2) : '-')).join(' '),
        r.currentOk,
      ]),
    ),
    '   rows: ' + [...new Set(rows.map((r) => r.row))].map((id) => `${id} = ${goal(id)}`).join('; '),
    '   change: current median ÷ base median − 1 (an ms row: the difference); paired change: the median over rounds of the same change within a round; noise "within": one side\'s median lies inside the other side\'s range of rounds (no change told from the noise)',
  ];
  return lines.join('\n');
}

async function main(): Promise<number> {
  const a = parseArgs(process.argv.slice(2));
  process.once('exit', killRunning);
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      killRunning();
      process.exit(130);
    });
  const work = mkdtempSync(join(tmpdir(), 'goals-ab-'));
  const b = materialize(a.base, work);
  const sides: Side[] = [
    { name: 'base', label: `${a.base} (${b.sha.slice(0, 7)})`, dir: b.dir, json: hasJsonFlag(b.dir) },
  ];
  if (a.head) {
    const h = materialize(a.head, work);
    sides.push({
      name: 'current',
      label: `${a.head} (${h.sha.slice(0, 7)})`,
      dir: h.dir,
      json: hasJsonFlag(h.dir),
    });
  } else {
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    sides.push({
      name: 'current',
      label: `working tree ${HERE} at ${git('rev-parse', '--short', 'HEAD')}${dirty ? ' + uncommitted changes' : ''}`,
      dir: HERE,
      json: hasJsonFlag(HERE),
    });
  }
  const command = `node --import tsx bench/lib/goals-ab.ts --base=${a.base}${a.head ? ` --head=${a.head}` : ''} --rounds=${a.rounds}${a.only ? ` --only=${a.only}` : ''}${a.benchArgs.length ? ` --bench-args="${a.benchArgs.join(' ')}"` : ''}`;
  const log = (s: string) => process.stdout.write(`${s}\n`);
  log(
    `# goals before/after (issue 33): ${a.rounds} paired round(s), bench --quick${a.only ? ` --only=${a.only}` : ''}`,
  );
  for (const s of sides)
    log(`   ${s.name.padEnd(7)} ${s.label}  (${s.dir}; rows from ${s.json ? '--json' : 'its output'})`);
  log(
    `   work directory ${work}; load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const runs: Run[] = [];
  for (let r = 1; r <= a.rounds; r++) {
    // base first in odd rounds, current first in even ones
    const order = r % 2 ? sides : [...sides].reverse();
    for (const s of order) {
      const run = await runBench(s, r, a, work);
      runs.push(run);
      log(
        `   round ${r}/${a.rounds} ${s.name.padEnd(7)} ${run.wallS.toFixed(0)} s, exit ${run.code}, ${run.rows.length} row(s) from ${run.from}; load ${loadavg()[0]!.toFixed(1)}  (${run.log})`,
      );
    }
  }
  const rows = compareRuns(runs, a.rounds);
  log('');
  log(formatAb(rows));
  const aa = rows.filter((r) => r.withinNoise === false);
  log(
    `\n   ${rows.length} row measurement(s); ${rows.length - aa.length} with the two sides within each other's noise${aa.length ? `, ${aa.length} outside: ${aa.map((r) => r.key).join('; ')}` : ''}`,
  );
  log(`   reproduce: ${command}`);
  if (a.out) {
    writeFileSync(
      resolve(a.out),
      `${JSON.stringify({ version: 1, date: new Date().toISOString(), command, sides, runs: runs.map(({ rows: _r, ...x }) => x), rows }, null, 2)}\n`,
    );
    log(`   written to ${resolve(a.out)}`);
  }
  if (!a.keep) for (const s of sides) if (s.dir !== HERE) rmSync(s.dir, { recursive: true, force: true });
  log(`   logs: ${work}${a.keep ? '' : ' (archived trees removed; --keep keeps them)'}`);
  return runs.some((r) => r.code !== 0) ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(2);
    },
  );
