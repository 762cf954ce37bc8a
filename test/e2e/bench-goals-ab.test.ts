/**
 * The quick run's selection, the goal rows' JSON (--json), reading them back from a bench's output when
 * it has no --json (its BENCH_JSON line, else the printed table), and the before/after comparison of
 * bench/lib/goals-ab.ts: pieces that need no run.
 */
import { describe, expect, it } from 'vitest';
import { selectCases } from '../../bench/cases/index.ts';
import { compareRuns, formatAb } from '../../bench/lib/goals-ab.ts';
import { goalsJson, rowKey, rowsFromOutput, rowsFromTable } from '../../bench/lib/goals-json.ts';
import { formatIssue33, judge, quickSelection, type Row33Check } from '../../bench/lib/goals33.ts';
import { parseOptions } from '../../bench/lib/options.ts';
import { jsonLine } from '../../bench/lib/report.ts';

const quick = (argv: string[], real = false) =>
  quickSelection(selectCases(parseOptions(argv, {}).only, real), parseOptions(argv, {})).map((c) => c.name);

describe('--quick selection', () => {
  it('runs only the cases behind the goal rows, unless --only or --all says otherwise', () => {
    expect(quick(['--quick'])).toEqual(['merged-list-canned', 'scale-curve', 'merged-watch']);
    expect(quick(['--quick', '--real'], true)).toEqual([
      'merged-list-canned',
      'scale-curve',
      'merged-watch',
      'real-list',
      'real-watch',
    ]);
    expect(quick(['--quick', '--only=exec'])).toEqual(['exec']);
    expect(quick(['--quick', '--all'])).toEqual(selectCases(undefined).map((c) => c.name));
    // a full run keeps every case
    expect(quick([])).toEqual(selectCases(undefined).map((c) => c.name));
  });

  it('takes --json=FILE and refuses --json without a file', () => {
    expect(parseOptions(['--json=/tmp/x.json'], {}).json).toBe('/tmp/x.json');
    expect(() => parseOptions(['--json'], {})).toThrow(/--json needs a file/);
  });
});

const checks: Array<{ case: string; check: Row33Check }> = [
  {
    case: 'merged-list-canned',
    check: {
      row: 'json-floor',
      where: '10×1,000 canned',
      ratio: 1.4321,
      ok: judge(1.4321, 1.1),
      detail: 'a; b',
    },
  },
  {
    case: 'merged-list-canned',
    check: { row: 'json-floor', where: '10×2,000 canned', ratio: 1.05, ok: judge(1.05, 1.1), detail: 'c' },
  },
  {
    case: 'merged-watch',
    check: {
      row: 'added-p99',
      where: '1000 merged watches, 3 simulated clusters',
      ratio: Number.NaN,
      shown: '-6.15 ms',
      ok: judge(-6.15, 2),
      detail: 'd',
    },
  },
  {
    case: 'merged-watch',
    check: { row: 'burst', where: '1000 watches, simulated clusters', ratio: 0.57, ok: false, detail: 'e' },
  },
];

describe('goal rows as JSON, and back from a run without --json', () => {
  it('keeps every measurement with its figure, and lists the rows nobody measured', () => {
    const doc = goalsJson(checks, { quick: true, totalS: 80, cases: [] });
    expect(doc.rows.map(rowKey)).toEqual([
      'json-floor | merged-list-canned, 10×1,000 canned',
      'json-floor | merged-list-canned, 10×2,000 canned',
      'burst | merged-watch, 1000 watches, simulated clusters',
      'added-p99 | merged-watch, 1000 merged watches, 3 simulated clusters',
    ]);
    expect(doc.rows.find((r) => r.row === 'added-p99')).toMatchObject({ value: -6.15, unit: 'ms', ok: true });
    expect(doc.rows[0]).toMatchObject({ value: 1.4321, unit: '×', ok: false });
    expect(doc.unmeasured.map((r) => r.row)).toContain('first-event');
    expect(doc.unmeasured.map((r) => r.row)).not.toContain('json-floor');
  });

  it('reads the same rows from the printed table as from the BENCH_JSON line', () => {
    const table = formatIssue33(checks);
    const benchJson = jsonLine({
      cases: [
        { name: 'merged-list-canned', issue33: checks.slice(0, 2).map((c) => c.check) },
        { name: 'merged-watch', issue33: checks.slice(2).map((c) => c.check) },
      ],
    });
    const fromJson = rowsFromOutput(`${table}\n\n${benchJson}\n`);
    expect(fromJson.from).toBe('BENCH_JSON');
    const fromTable = rowsFromOutput(`noise\n${table}\n\n   time: 80 s\n`);
    expect(fromTable.from).toBe('table');
    expect(fromTable.rows.map(rowKey)).toEqual(fromJson.rows.map(rowKey));
    // the table prints two decimals
    expect(fromTable.rows.map((r) => r.value)).toEqual([1.43, 1.05, 0.57, -6.15]);
    expect(fromTable.rows.map((r) => r.ok)).toEqual([false, true, false, true]);
    expect(rowsFromTable('no goals here')).toEqual([]);
    expect(rowsFromOutput('BENCH_JSON {"cases":[').from).toBe('none');
  });
});

describe('before/after of the rows (goals-ab)', () => {
  const row = (value: number, where = '10×1,000 canned') => ({
    row: 'json-floor',
    goal: 'g',
    case: 'merged-list-canned',
    where,
    value,
    unit: '×' as const,
    ok: value <= 1.1,
    detail: '',
  });
  const run = (side: 'base' | 'current', round: number, values: number[]) => ({
    side,
    round,
    code: 0,
    wallS: 1,
    log: '',
    from: '--json',
    rows: values.map((v, i) => row(v, `shape ${i}`)),
  });

  it('gives each side its median over rounds, the change and the paired change', () => {
    const rows = compareRuns(
      [
        run('base', 1, [1.5, 2.0]),
        run('current', 1, [1.2, 2.1]),
        run('current', 2, [1.0, 1.9]),
        run('base', 2, [1.6, 2.2]),
        run('base', 3, [1.4, 2.0]),
        run('current', 3, [1.1, 2.0]),
      ],
      3,
    );
    expect(rows).toHaveLength(2);
    const [a, b] = rows as [(typeof rows)[0], (typeof rows)[0]];
    expect(a.base).toEqual([1.5, 1.6, 1.4]);
    expect(a.baseMedian).toBe(1.5);
    expect(a.currentMedian).toBeCloseTo(1.1);
    expect(a.change).toBeCloseTo((1.1 / 1.5 - 1) * 100);
    expect(a.withinNoise).toBe(false);
    expect(a.currentOk).toBe('2/3 OK');
    expect(b.withinNoise).toBe(true);
    const text = formatAb(rows);
    expect(text).toContain('OUTSIDE');
    expect(text).toContain('-27%');
  });

  it('takes a row whose shape says more in one run as the same row', () => {
    const limited = run('base', 2, [1.7]);
    limited.rows[0]!.where = 'shape 0, the simulated clusters the limit';
    const rows = compareRuns([run('base', 1, [1.5]), run('current', 1, [1.4]), limited], 2);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.base).toEqual([1.5, 1.7]);
  });

  it('keeps a round a side did not measure as a gap, not a zero', () => {
    const rows = compareRuns([run('base', 1, [1.5]), run('current', 1, [1.4]), run('base', 2, [1.7])], 2);
    expect(rows[0]!.current[1]).toBeNaN();
    expect(rows[0]!.currentMedian).toBe(1.4);
    expect(rows[0]!.baseMedian).toBeCloseTo(1.6);
  });
});
