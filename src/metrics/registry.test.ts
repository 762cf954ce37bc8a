import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXPOSITION_CONTENT_TYPE, MAX_SERIES, Registry } from './registry.ts';

/** A reader of the text format written from its specification, to check what the registry writes. */
function parseExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$/.exec(
      line,
    );
    if (!m) throw new Error(`not an exposition line: ${JSON.stringify(line)}`);
    out.set(`${m[1]}${m[2] ?? ''}`, m[3] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[3]));
  }
  return out;
}

describe('the metrics registry', () => {
  it('writes counters, gauges and histograms in the text format, with HELP and TYPE', () => {
    const r = new Registry();
    const c = r.counter('req_total', 'Requests.', ['verb', 'code']);
    const g = r.gauge('inflight', 'In flight.', ['kind']);
    const h = r.histogram('dur_seconds', 'Durations.', ['verb'], [0.1, 1]);
    c.inc({ verb: 'GET', code: '200' });
    c.inc({ verb: 'GET', code: '200' }, 2);
    c.inc({ verb: 'LIST', code: '503' });
    g.inc({ kind: 'readOnly' });
    g.inc({ kind: 'readOnly' });
    g.dec({ kind: 'readOnly' });
    h.observe({ verb: 'GET' }, 0.05);
    h.observe({ verb: 'GET' }, 0.5);
    h.observe({ verb: 'GET' }, 5);
    const text = r.expose();
    expect(text).toContain('# HELP req_total Requests.\n# TYPE req_total counter\n');
    expect(text).toContain('# TYPE dur_seconds histogram');
    expect(text.endsWith('\n')).toBe(true);
    const m = parseExposition(text);
    expect(m.get('req_total{verb="GET",code="200"}')).toBe(3);
    expect(m.get('req_total{verb="LIST",code="503"}')).toBe(1);
    expect(m.get('inflight{kind="readOnly"}')).toBe(1);
    expect(m.get('dur_seconds_bucket{verb="GET",le="0.1"}')).toBe(1);
    expect(m.get('dur_seconds_bucket{verb="GET",le="1"}')).toBe(2);
    expect(m.get('dur_seconds_bucket{verb="GET",le="+Inf"}')).toBe(3);
    expect(m.get('dur_seconds_count{verb="GET"}')).toBe(3);
    expect(m.get('dur_seconds_sum{verb="GET"}')).toBeCloseTo(5.55);
    expect(EXPOSITION_CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('folds series past the cap into one, so request-chosen label values cannot grow it without bound', () => {
    const r = new Registry();
    const c = r.counter('req_total', 'Requests.', ['resource']);
    const h = r.histogram('d_seconds', 'D.', ['resource'], [1]);
    for (let i = 0; i < MAX_SERIES + 500; i++) {
      c.inc({ resource: `r${i}` });
      h.observe({ resource: `r${i}` }, 0.5);
    }
    expect(c.entries()).toHaveLength(MAX_SERIES + 1);
    expect(c.get({ resource: '_other' })).toBe(500);
    expect(h.get({ resource: '_other' })).toBe(500);
    expect(c.get({ resource: 'r7' })).toBe(1);
  });

  it('refuses a metric registered twice', () => {
    const r = new Registry();
    r.counter('a', 'A');
    expect(() => r.gauge('a', 'A')).toThrow('registered twice');
  });

  it('escapes any label value so every line stays parseable and the value survives', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), fc.nat(1000), (value, n) => {
        const r = new Registry();
        const c = r.counter('x_total', 'help with \\ and\nnewline', ['v']);
        c.inc({ v: value }, n);
        const text = r.expose();
        const lines = text.trimEnd().split('\n');
        expect(lines).toHaveLength(3);
        const parsed = parseExposition(text);
        expect([...parsed.values()]).toEqual([n]);
        const key = [...parsed.keys()][0]!;
        const raw = key.slice('x_total{v="'.length, -2);
        const unescaped = raw.replace(/\\(.)/g, (_, ch) => (ch === 'n' ? '\n' : ch));
        expect(unescaped).toBe(value);
      }),
      { numRuns: 500 },
    );
  });

  it('writes a histogram as its definition says, whatever the values and the order series first appear', () => {
    const bounds = [0.005, 0.01, 0.025, 0.1, 1, 10];
    const value = fc.oneof(
      fc.double({ min: -1, max: 20, noNaN: false }),
      fc.constantFrom(...bounds, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, -0),
    );
    const obs = fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('200', '500'), value), {
      maxLength: 60,
    });
    fc.assert(
      fc.property(obs, (list) => {
        const r = new Registry();
        const h = r.histogram('d_seconds', 'D.', ['cluster', 'code'], bounds);
        for (const [cluster, code, v] of list) h.observe({ cluster, code }, v);
        // the reference: series in the order first observed, every bucket counting the values at or under it
        const order: string[] = [];
        for (const [cluster, code] of list) {
          const k = `cluster="${cluster}",code="${code}"`;
          if (!order.includes(k)) order.push(k);
        }
        const lines = ['# HELP d_seconds D.', '# TYPE d_seconds histogram'];
        for (const k of order) {
          const vs = list.filter(([c, x]) => `cluster="${c}",code="${x}"` === k).map((o) => o[2]);
          for (const b of bounds)
            lines.push(`d_seconds_bucket{${k},le="${b}"} ${vs.filter((v) => v <= b).length}`);
          lines.push(`d_seconds_bucket{${k},le="+Inf"} ${vs.length}`);
          const sum = vs.reduce((a, v) => a + v, 0);
          const fmt = Number.isNaN(sum)
            ? 'NaN'
            : sum === Infinity
              ? '+Inf'
              : sum === -Infinity
                ? '-Inf'
                : String(sum);
          lines.push(`d_seconds_sum{${k}} ${fmt}`, `d_seconds_count{${k}} ${vs.length}`);
        }
        expect(r.expose()).toBe(`${lines.join('\n')}\n`);
      }),
      { numRuns: 300 },
    );
  });

  it('counts on a kept cell as on its labels, the last label given apart', () => {
    const r = new Registry();
    const c = r.counter('req_total', 'R.', ['verb', 'code']);
    const g = r.gauge('up', 'U.', ['cluster'], { merge: 'last', now: () => 7 });
    const cell = c.cell({ verb: 'GET' }, '200');
    cell.value += 2;
    c.inc({ verb: 'GET', code: '200' });
    expect(c.cell({ verb: 'GET', code: '200' })).toBe(cell);
    expect(c.get({ verb: 'GET', code: '200' })).toBe(3);
    expect(c.get({ verb: 'GET', code: '404' })).toBe(0);
    g.setCell(g.cell({ cluster: 'm1' }), 1);
    expect(g.snapshot().series).toEqual([{ labels: { cluster: 'm1' }, value: 1, at: 7 }]);
    expect(c.snapshot().series).toEqual([{ labels: { verb: 'GET', code: '200' }, value: 3 }]);
  });

  it('refuses histogram bounds that do not increase (an observation finds its bucket by bisection)', () => {
    const r = new Registry();
    expect(() => r.histogram('h', 'H.', [], [1, 0.5])).toThrow('bounds must increase');
  });
});
