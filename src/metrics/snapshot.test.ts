import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseExposition } from './parse.ts';
import { Registry } from './registry.ts';
import { exposeSnapshot, isRegistrySnapshot, mergeSnapshots, type RegistrySnapshot } from './snapshot.ts';

/** the same metrics as the fleet's kinds: a counter, a summed gauge, a `last` gauge, a histogram */
function registry(now: () => number) {
  const r = new Registry();
  return {
    r,
    c: r.counter('req_total', 'Requests.', ['verb', 'code']),
    g: r.gauge('inflight', 'In flight.', ['kind']),
    up: r.gauge('up', 'Reached.', ['cluster'], { merge: 'last', now }),
    h: r.histogram('dur_seconds', 'Durations.', ['verb'], [0.25, 1, 4]),
  };
}

type Event =
  | { p: number; k: 'inc'; l: string; by: number }
  | { p: number; k: 'gauge'; l: string; by: number }
  | { p: number; k: 'set'; l: string; v: number }
  | { p: number; k: 'observe'; l: string; v: number };

const label = fc.constantFrom('GET', 'LIST', 'a"b', 'c\\d\ne', '');
const proc = fc.nat(3);
const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ p: proc, k: fc.constant('inc' as const), l: label, by: fc.nat(5) }),
  fc.record({ p: proc, k: fc.constant('gauge' as const), l: label, by: fc.integer({ min: -3, max: 3 }) }),
  fc.record({ p: proc, k: fc.constant('set' as const), l: label, v: fc.constantFrom(0, 1) }),
  // quarters: sums of them are exact in binary floating point, whatever order they are added in
  fc.record({ p: proc, k: fc.constant('observe' as const), l: label, v: fc.nat(40).map((n) => n / 4) }),
);

function apply(m: ReturnType<typeof registry>, e: Event): void {
  if (e.k === 'inc') m.c.inc({ verb: e.l, code: '200' }, e.by);
  else if (e.k === 'gauge') m.g.inc({ kind: e.l }, e.by);
  else if (e.k === 'set') m.up.set({ cluster: e.l }, e.v);
  else m.h.observe({ verb: e.l }, e.v);
}

/** as it crosses node:cluster IPC */
const overIpc = (s: RegistrySnapshot): RegistrySnapshot => JSON.parse(JSON.stringify(s));

describe('registry snapshots and their merge', () => {
  it('merging the snapshots of processes that shared the events equals one registry fed all of them', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 80 }), (events) => {
        let t = 0;
        const now = () => t; // one clock, a tick per event: the latest `set` anywhere is the latest of all
        const procs = [0, 1, 2, 3].map(() => registry(now));
        const one = registry(now);
        for (const [i, e] of events.entries()) {
          t = i + 1;
          apply(procs[e.p]!, e);
          apply(one, e);
        }
        const snaps = procs.map((p) => overIpc(p.r.snapshot()));
        expect(snaps.every(isRegistrySnapshot)).toBe(true);
        const merged = exposeSnapshot(mergeSnapshots(snaps));
        expect(parseExposition(merged)).toEqual(parseExposition(one.r.expose()));
        // HELP and TYPE once per metric, in registration order
        const meta = (s: string) => s.split('\n').filter((l) => l.startsWith('# '));
        expect(meta(merged)).toEqual(meta(one.r.expose()));
        // merging in steps (a gone worker's counts kept, then added to later ones) is the same
        const stepwise = mergeSnapshots([mergeSnapshots([snaps[0]!, snaps[1]!]), snaps[2]!, snaps[3]!]);
        expect(parseExposition(exposeSnapshot(stepwise))).toEqual(parseExposition(merged));
      }),
      { numRuns: 300 },
    );
  });

  it('writes what the registry writes, byte for byte, for one process', () => {
    const m = registry(() => 1);
    m.c.inc({ verb: 'GET', code: '200' }, 3);
    m.h.observe({ verb: 'GET' }, 0.5);
    m.up.set({ cluster: 'a' }, 1);
    expect(exposeSnapshot(mergeSnapshots([overIpc(m.r.snapshot())]))).toBe(m.r.expose());
  });

  it('a max gauge keeps the largest, and a snapshot is a copy the registry does not change later', () => {
    const a = new Registry();
    const b = new Registry();
    a.gauge('x', 'X', [], { merge: 'max' }).set({}, 3);
    const gb = b.gauge('x', 'X', [], { merge: 'max' });
    gb.set({}, 2);
    const sb = b.snapshot();
    gb.set({}, 9);
    expect(parseExposition(exposeSnapshot(mergeSnapshots([a.snapshot(), sb]))).get('x')).toBe(3);
  });

  it('leaves out the series of a metric whose shape differs (another build), keeping the first', () => {
    const a = new Registry();
    const b = new Registry();
    a.histogram('d', 'D', [], [1, 2]).observe({}, 1.5);
    b.histogram('d', 'D', [], [1, 5]).observe({}, 1.5);
    const text = exposeSnapshot(mergeSnapshots([a.snapshot(), b.snapshot()]));
    expect(parseExposition(text).get('d_count')).toBe(1);
    expect(parseExposition(text).get('d_bucket{le="2"}')).toBe(1);
  });

  it('knows a snapshot from something else', () => {
    for (const bad of [
      null,
      {},
      [{ name: 'x' }],
      [{ name: 'x', help: '', labelNames: [], series: [], type: 'gauge' }],
    ])
      expect(isRegistrySnapshot(bad)).toBe(false);
  });
});
