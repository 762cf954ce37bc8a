/**
 * The bench's reporting pieces that need no run: which cases a selection runs (the real-bed ones only when
 * asked), issue 33's goals table (every row, measured or not), and the scale curve's SVG.
 */
import { describe, expect, it } from 'vitest';
import { selectCases } from '../../bench/cases/index.ts';
import { formatIssue33, ISSUE33_ROWS, judge, type Row33Check } from '../../bench/lib/goals33.ts';
import { parseOptions } from '../../bench/lib/options.ts';
import { type ScalePoint, scaleSvg } from '../../bench/lib/scale-svg.ts';

const names = (only?: string[], real?: boolean) => selectCases(only, real).map((c) => c.name);

describe('bench case selection', () => {
  it('leaves the real-bed cases out unless --real or --only names them', () => {
    expect(names().filter((n) => n.startsWith('real-'))).toEqual([]);
    expect(names(undefined, true).filter((n) => n.startsWith('real-'))).toEqual([
      'real-list',
      'real-passthrough',
      'real-watch',
    ]);
    expect(names(['real'])).toEqual(['real-list', 'real-passthrough', 'real-watch']);
    expect(names(['real-watch'])).toEqual(['real-watch']);
    expect(names(['scale-curve'])).toEqual(['scale-curve']);
  });

  it('parses --real and --write-docs, and refuses an unknown flag', () => {
    const o = parseOptions(['--real', '--write-docs'], {});
    expect(o.real).toBe(true);
    expect(o.writeDocs).toBe(true);
    expect(parseOptions([], {}).real).toBe(false);
    expect(parseOptions([], { BENCH_REAL: '1' }).real).toBe(true);
    expect(() => parseOptions(['--write-doc'], {})).toThrow(/unknown flag --write-doc/);
  });
});

describe("issue 33's goals table", () => {
  it('prints every row once when nothing measured it, naming the case that would', () => {
    const out = formatIssue33([]).trim().split('\n');
    expect(out).toHaveLength(ISSUE33_ROWS.length + 1);
    for (const [i, row] of ISSUE33_ROWS.entries()) {
      expect(out[i + 1]).toContain(row.goal);
      expect(out[i + 1]).toContain(`[not measured in this run: ${row.cases}]`);
    }
  });

  it('prints each measurement of a row with its ratio and verdict', () => {
    const checks: Array<{ case: string; check: Row33Check }> = [
      {
        case: 'real-watch',
        check: {
          row: 'first-event',
          where: 'real members, fleet-direct',
          ratio: 1.1,
          ok: judge(1.1, 1.2),
          detail: 'a',
        },
      },
      {
        case: 'real-watch',
        check: {
          row: 'first-event',
          where: 'real members, fleet-karmada',
          ratio: 2.5,
          ok: judge(2.5, 1.2),
          detail: 'b',
        },
      },
      {
        case: 'merged-watch',
        check: {
          row: 'added-p99',
          where: 'w',
          ratio: Number.NaN,
          shown: '+3.00 ms',
          ok: judge(3, 2),
          detail: 'c',
        },
      },
    ];
    const out = formatIssue33(checks);
    expect(out).toMatch(/first watch event .*: 1\.10× \(real-watch, real members, fleet-direct; a\) \[OK\]/);
    expect(out).toMatch(
      /first watch event .*: 2\.50× \(real-watch, real members, fleet-karmada; b\) \[MISSED\]/,
    );
    expect(out).toMatch(/added p99 .*: \+3\.00 ms \(merged-watch, w; c\) \[MISSED\]/);
    expect(judge(Number.NaN, 1)).toBeUndefined();
    expect(judge(0.95, 0.9, true)).toBe(true);
    expect(judge(0.85, 0.9, true)).toBe(false);
  });
});

describe('the scale curve SVG', () => {
  const pt = (clusters: number, fleetMs: number, cpuMs: number, memMiB: number): ScalePoint => ({
    clusters,
    items: 10_000,
    fleetMs,
    parallelMs: fleetMs / 2,
    cpuMs,
    memMiB,
  });

  it('draws one line per series through every finite point, inside its panel', () => {
    const svg = scaleSvg(
      [pt(200, 1000, 300, 30), pt(10, 900, 200, 4), pt(1000, 2000, Number.NaN, 80)],
      'cap <x>',
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('cap &lt;x&gt;');
    const lines = [...svg.matchAll(/<polyline [^>]*points="([^"]+)"/g)].map((m) => m[1]!.split(' '));
    // time: fleet and parallel (3 points each); CPU: 2 finite points; memory: 3
    expect(lines.map((l) => l.length)).toEqual([3, 3, 2, 3]);
    for (const l of lines) {
      const xs = l.map((p) => Number(p.split(',')[0]));
      const ys = l.map((p) => Number(p.split(',')[1]));
      // sorted by clusters on the x axis, every y within the plot area (top 30, bottom 180)
      expect([...xs].sort((a, b) => a - b)).toEqual(xs);
      for (const y of ys) {
        expect(y).toBeGreaterThanOrEqual(30);
        expect(y).toBeLessThanOrEqual(180);
      }
    }
    for (const c of ['10', '200', '1000']) expect(svg).toContain(`>${c}</text>`);
  });
});
