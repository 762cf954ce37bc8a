/**
 * Issue 33's goals table: every row printed, in the issue's order, as one line with the same-run ratio
 * and OK/MISSED. The figures come from the cases' own goal checks (`GoalCheck.row` names the row); a row no
 * selected case measured says which case measures it, so a partial run shows what it left out.
 */
import { fmt } from './report.ts';

/** One measurement of a row: the same-run ratio, judged against the row's limit. */
export interface Row33Check {
  row: Row33['id'];
  /** which shape or path it was measured on, e.g. `10×1,000` or `real members, karmada fleet` */
  where: string;
  ratio: number;
  /** what to print instead of the ratio, for a row whose limit is not a ratio (added p99, ms) */
  shown?: string;
  ok: boolean | undefined;
  /** the figures behind the ratio, one short clause */
  detail: string;
}

export interface Row33 {
  id: string;
  goal: string;
  /** the cases that measure it (what to pass to --only) */
  cases: string;
  /** what a run without those cases adds to their names */
  unmeasured?: string;
  /** a figure beside a goal, not judged (printed `[info]`): e.g. what the floor proxy reaches */
  info?: true;
}

export const ISSUE33_ROWS: Row33[] = [
  {
    id: 'json-floor',
    goal: 'merged JSON list ÷ floor proxy ≤ 1.10× (10×1,000, 10×2,000)',
    cases: 'merged-list-canned',
  },
  { id: 'table-floor', goal: 'merged Table list ÷ floor proxy ≤ 1.15×', cases: 'merged-list-canned' },
  { id: 'cpu-json-floor', goal: 'fleet CPU/MiB ÷ floor CPU/MiB, JSON ≤ 1.2×', cases: 'merged-list-canned' },
  { id: 'cpu-table-floor', goal: 'fleet CPU/MiB ÷ floor CPU/MiB, Table ≤ 1.3×', cases: 'merged-list-canned' },
  {
    id: 'json-parallel',
    goal: 'merged JSON list ÷ all clusters read in parallel unmerged, 10×1,000 ≤ 1.5×',
    cases: 'merged-list-canned, real-list',
  },
  {
    id: 'cpu-item-200',
    goal: 'fleet CPU per item, 10 → 200 clusters, same 10,000 pods ≤ 1.25×',
    cases: 'scale-curve',
  },
  {
    id: 'cpu-item-1000',
    goal: 'fleet CPU per item, 10 → 1,000 clusters, same 10,000 pods ≤ 1.25×',
    cases: 'scale-curve',
  },
  {
    id: 'first-event',
    goal: 'first watch event through the fleet ÷ direct ≤ 1.2×',
    cases: 'real-watch',
    unmeasured: 'it runs on the real test bed: add --real, or --only=real-watch',
  },
  {
    id: 'burst',
    goal: 'watch burst rate ÷ direct ≥ 0.9×',
    cases: 'merged-list-canned, merged-watch, real-watch',
  },
  {
    id: 'burst-floor',
    goal: 'watch burst rate, copy-only floor proxy ÷ direct (what any proxy reaches here)',
    cases: 'merged-list-canned, merged-watch',
    info: true,
  },
  {
    id: 'added-p99',
    goal: 'added p99 at 1,000 events/s over 1,000 merged watches ≤ 2 ms',
    cases: 'merged-watch',
  },
  {
    id: 'added-p99-floor',
    goal: 'added p99 at 1,000 events/s, copy-only floor proxy (what any proxy adds here)',
    cases: 'merged-watch',
    info: true,
  },
];

/** the cases that measure some row: what a plain --quick run runs (bench/run.ts) */
export const ISSUE33_CASES: ReadonlySet<string> = new Set(
  ISSUE33_ROWS.flatMap((r) => r.cases.split(',').map((c) => c.trim())),
);

/**
 * The cases a run takes of `selected`: --quick without --only or --all keeps those behind a row (a smoke
 * run of the goals table); any other run all of them.
 */
export function quickSelection<T extends { name: string }>(
  selected: T[],
  o: { quick: boolean; only?: string[]; all: boolean },
): T[] {
  return o.quick && !o.only && !o.all ? selected.filter((c) => ISSUE33_CASES.has(c.name)) : selected;
}

const mark = (ok: boolean | undefined, info?: true) =>
  info ? 'info' : ok === undefined ? 'not measured' : ok ? 'OK' : 'MISSED';

/** `checks`: every row measurement of the run, with the case that made it. */
export function formatIssue33(checks: Array<{ case: string; check: Row33Check }>): string {
  const lines = ['\n## goals (issue 33; each a ratio of figures measured in this run)'];
  for (const row of ISSUE33_ROWS) {
    const hits = checks.filter((c) => c.check.row === row.id);
    if (!hits.length) {
      lines.push(
        `   ${row.goal}: - [not measured in this run: ${row.cases}]${row.unmeasured ? ` (${row.unmeasured})` : ''}`,
      );
      continue;
    }
    for (const h of hits)
      lines.push(
        `   ${row.goal}: ${h.check.shown ?? fmt.x(h.check.ratio)} (${h.case}, ${h.check.where}; ${h.check.detail}) [${mark(h.check.ok, row.info)}]`,
      );
  }
  return lines.join('\n');
}

/** `x` against a limit: OK when at most (or, `atLeast`, at least) the limit; undefined when not a number */
export function judge(x: number, limit: number, atLeast = false): boolean | undefined {
  if (!Number.isFinite(x)) return undefined;
  return atLeast ? x >= limit : x <= limit;
}
