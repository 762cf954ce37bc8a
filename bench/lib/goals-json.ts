/**
 * Issue 33's goal rows of one run, machine-readable (`npm run bench -- --json=FILE`), and the way back
 * from a run's output to those rows for a bench that predates the flag (bench/lib/goals-ab.ts compares
 * two trees' runs): its BENCH_JSON line (`cases[].issue33`), else the printed goals table.
 */
import { ISSUE33_ROWS, type Row33Check } from './goals33.ts';

export interface GoalRowJson {
  /** the row's id (goals33.ts), e.g. `json-floor` */
  row: string;
  goal: string;
  /** the case that measured it */
  case: string;
  /** the shape or path, e.g. `10×1,000 canned` */
  where: string;
  /** the figure compared: the ratio, or for a row judged in ms (added p99) the ms */
  value: number | null;
  unit: '×' | 'ms';
  ok: boolean | null;
  detail: string;
}

export interface GoalsJson {
  version: 1;
  date: string;
  quick: boolean;
  rows: GoalRowJson[];
  /** rows no case of the run measured, with the cases that would */
  unmeasured: Array<{ row: string; goal: string; cases: string }>;
  cases: Array<{ name: string; wallS: number | null; cpuS: number | null; error?: string }>;
  totalS: number;
}

/** the figure a row check stands for: its ratio, else the number in what it shows (`+8.61 ms`) */
function figureOf(c: Row33Check): { value: number | null; unit: '×' | 'ms' } {
  if (typeof c.ratio === 'number' && Number.isFinite(c.ratio)) return { value: c.ratio, unit: '×' };
  const m = /([-+]?\d+(?:\.\d+)?)\s*ms/.exec(c.shown ?? '');
  return m ? { value: Number(m[1]), unit: 'ms' } : { value: null, unit: '×' };
}

export function goalRows(checks: Array<{ case: string; check: Row33Check }>): GoalRowJson[] {
  const out: GoalRowJson[] = [];
  for (const row of ISSUE33_ROWS)
    for (const { case: name, check } of checks.filter((c) => c.check.row === row.id))
      out.push({
        row: row.id,
        goal: row.goal,
        case: name,
        where: check.where,
        ...figureOf(check),
        ok: check.ok ?? null,
        detail: check.detail,
      });
  return out;
}

export function goalsJson(
  checks: Array<{ case: string; check: Row33Check }>,
  o: Pick<GoalsJson, 'quick' | 'cases' | 'totalS'>,
): GoalsJson {
  const rows = goalRows(checks);
  return {
    version: 1,
    date: new Date().toISOString(),
    ...o,
    rows,
    unmeasured: ISSUE33_ROWS.filter((r) => !rows.some((x) => x.row === r.id)).map((r) => ({
      row: r.id,
      goal: r.goal,
      cases: r.cases,
    })),
  };
}

/** a row measurement's identity across runs and trees: the row, the case and the shape */
export const rowKey = (r: Pick<GoalRowJson, 'row' | 'case' | 'where'>) => `${r.row} | ${r.case}, ${r.where}`;

/**
 * The goal rows of a run from its output, for a bench without --json: the BENCH_JSON line's per-case
 * `issue33` checks (the same figures), else the lines of the printed goals table (`## goals (issue 33`).
 * Empty when the output has neither.
 */
export function rowsFromOutput(out: string): { rows: GoalRowJson[]; from: 'BENCH_JSON' | 'table' | 'none' } {
  const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (line) {
    try {
      const json = JSON.parse(line.slice('BENCH_JSON '.length)) as {
        cases?: Array<{ name: string; issue33?: Array<Row33Check & { ratio: number | null }> }>;
      };
      const checks = (json.cases ?? []).flatMap((c) =>
        (c.issue33 ?? []).map((check) => ({
          case: c.name,
          check: { ...check, ratio: check.ratio ?? Number.NaN },
        })),
      );
      if (checks.length) return { rows: goalRows(checks), from: 'BENCH_JSON' };
    } catch {
      // a truncated line (the run died while printing it): the table may still be there
    }
  }
  const rows = rowsFromTable(out);
  return { rows, from: rows.length ? 'table' : 'none' };
}

/** `   <goal>: <1.43× | +8.61 ms> (<case>, <where>; <detail>) [OK|MISSED|not measured|info]` under the heading */
export function rowsFromTable(out: string): GoalRowJson[] {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => l.startsWith('## goals (issue 33'));
  if (at < 0) return [];
  const rows: GoalRowJson[] = [];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith('   ')) break;
    const text = l.trim();
    // the longest goal text that starts the line (one goal's text could start another's)
    const row = ISSUE33_ROWS.filter((r) => text.startsWith(`${r.goal}: `)).sort(
      (a, b) => b.goal.length - a.goal.length,
    )[0];
    if (!row) continue;
    const m = /^(\S+(?: ms)?) \(([^,]+), ([^;]+); (.*)\) \[(OK|MISSED|not measured|info)\]$/.exec(
      text.slice(row.goal.length + 2),
    );
    if (!m) continue;
    const [, shown, name, where, detail, mark] = m as unknown as [
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const ms = /ms$/.test(shown);
    const n = Number.parseFloat(shown.replace(/[×+]/g, ''));
    rows.push({
      row: row.id,
      goal: row.goal,
      case: name,
      where,
      value: Number.isFinite(n) ? n : null,
      unit: ms ? 'ms' : '×',
      ok: mark === 'OK' ? true : mark === 'MISSED' ? false : null,
      detail,
    });
  }
  return rows;
}
