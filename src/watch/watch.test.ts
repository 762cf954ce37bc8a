import { describe, expect, it } from 'vitest';
import type { Target } from '../upstreams/fanout.ts';
import { Backoff } from './backoff.ts';
import { holdSource } from './hold.ts';
import { membershipChange, refreshEndpoints } from './membership.ts';
import type { MergeStep, WatchEvent } from './merge.ts';
import { WatchOutput } from './output.ts';
import { watchEvents } from './read.ts';
import type { Source } from './sources.ts';
import { failedForGood, type Start } from './start.ts';
import { Upstreams } from './upstreams.ts';

const enc = new TextEncoder();

function body(chunks: string[], end: 'close' | 'error' = 'close'): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const x of chunks) c.enqueue(enc.encode(x));
      if (end === 'close') c.close();
      else c.error(new TypeError('terminated'));
    },
  });
}

async function collect(b: ReadableStream<Uint8Array>): Promise<{ events: WatchEvent[]; error?: unknown }> {
  const events: WatchEvent[] = [];
  try {
    for await (const ev of watchEvents(b)) events.push(ev);
    return { events };
  } catch (error) {
    return { events, error };
  }
}

describe('watchEvents', () => {
  it('reads events split anywhere across chunks, blank lines skipped', async () => {
    const line = (n: number) => JSON.stringify({ type: 'ADDED', object: { n } });
    const all = `${line(1)}\n\n${line(2)}\n${line(3)}`;
    const r = await collect(body([all.slice(0, 7), all.slice(7, 40), all.slice(40)]));
    expect(r.error).toBeUndefined();
    expect(r.events.map((e) => e.object.n)).toEqual([1, 2, 3]);
  });

  it('breaks on what is not a JSON watch event, after the good events', async () => {
    const good = `${JSON.stringify({ type: 'ADDED', object: { n: 1 } })}\n`;
    for (const bad of ['<html>oops</html>\n', '42\n', '{"type":"ADDED"}\n']) {
      const r = await collect(body([good, bad]));
      expect(r.events).toHaveLength(1);
      expect(r.error).toBeInstanceOf(Error);
    }
  });
});

describe('Backoff', () => {
  it('doubles to the cap with jitter, never under half the current delay, and resets', () => {
    const lo = new Backoff({ initialMs: 100, maxMs: 1_000, random: () => 0 });
    expect([1, 2, 3, 4, 5, 6].map(() => lo.next())).toEqual([50, 100, 200, 400, 500, 500]);
    expect(lo.failures).toBe(6);
    lo.reset();
    expect(lo.failures).toBe(0);
    expect(lo.next()).toBe(50);
    const hi = new Backoff({ initialMs: 100, maxMs: 1_000, random: () => 0.999 });
    expect(hi.next()).toBeCloseTo(99.95);
  });
});

describe('holdSource', () => {
  it('reconnects a stream that opens and ends at once at a bounded rate, backing off, and tells once', async () => {
    let opens = 0;
    const told: string[] = [];
    const src: Source = {
      label: 'cluster x',
      clusters: ['x'],
      open: async () => {
        opens++;
        return new Response(body([]), { status: 200 });
      },
      event: (): MergeStep => ({ kind: 'emit', lines: [] }),
      gone: (): MergeStep => ({ kind: 'emit', lines: [] }),
      unavailable: (why): MergeStep => {
        told.push(why);
        return { kind: 'emit', lines: [] };
      },
      resumed: (): MergeStep => ({ kind: 'emit', lines: [] }),
    };
    const ac = new Upstreams();
    const out = new WatchOutput(
      { timeoutMs: undefined, heartbeatLine: () => undefined, onClose: () => ac.abort() },
      () => {},
    );
    const held = holdSource(src, new Response(body([]), { status: 200 }), out, {
      upstreams: ac,
      sendInitialEvents: false,
      backoff: new Backoff({ initialMs: 20, maxMs: 200, random: () => 0.5 }),
    });
    await new Promise((r) => setTimeout(r, 1_000));
    out.close();
    await held;
    // delays 15, 30, 60, 120, 150, 150, …: about 9 reconnects in a second, not thousands
    expect(opens).toBeGreaterThanOrEqual(3);
    expect(opens).toBeLessThanOrEqual(12);
    expect(told).toEqual(['watch ended at once; retrying']);
  });

  it('ends the merged stream on a 410 at resume, with the ERROR the source makes of it', async () => {
    const lines: string[] = [];
    const src: Source = {
      label: 'cluster x',
      clusters: ['x'],
      open: async () =>
        new Response(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired' }), { status: 410 }),
      event: (ev): MergeStep => ({ kind: 'expired', line: `${JSON.stringify(ev)}\n` }),
      gone: (): MergeStep => ({ kind: 'emit', lines: [] }),
      unavailable: (): MergeStep => ({ kind: 'emit', lines: [] }),
      resumed: (): MergeStep => ({ kind: 'emit', lines: [] }),
    };
    const ac = new Upstreams();
    const out = new WatchOutput(
      { timeoutMs: undefined, heartbeatLine: () => undefined, onClose: () => ac.abort() },
      () => {},
    );
    const reading = (async () => {
      const r = out.body.getReader();
      for (;;) {
        const { value, done } = await r.read();
        if (done) return;
        lines.push(new TextDecoder().decode(value));
      }
    })();
    await holdSource(src, undefined, out, { upstreams: ac, sendInitialEvents: false });
    await reading;
    expect(out.closed).toBe(true);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).object.code).toBe(410);
  });
});

describe('failedForGood', () => {
  const src = (c: string) => ({ label: `cluster ${c}`, clusters: [c] }) as unknown as Source;
  const failed = (c: string, status: number, reason = 'x'): Start => ({ src: src(c), status, reason });
  const ok = (c: string): Start => ({ src: src(c), res: new Response('') });

  it('is every start when each is down, not served there, or refused to the caller', () => {
    const starts = [
      failed('a', 404),
      failed('b', 0, 'connection refused'),
      failed('c', 500),
      failed('d', 403),
    ];
    expect(failedForGood(starts)).toEqual(starts);
    expect(failedForGood([failed('a', 0), failed('b', 503)])).toHaveLength(2);
  });

  it('is nothing when one answered, when one failed in a way the stream serves (410, a 4xx retried), or none was asked', () => {
    expect(failedForGood([failed('a', 404), ok('b')])).toBeUndefined();
    expect(failedForGood([failed('a', 500), failed('b', 410)])).toBeUndefined();
    expect(failedForGood([failed('a', 500), failed('b', 429)])).toBeUndefined();
    expect(failedForGood([])).toBeUndefined();
  });
});

describe('refreshEndpoints', () => {
  it("hands a held target the fleet's endpoint now: a member Ready again is dialled on the next resume", () => {
    const notReady = { name: 'member1', notReady: 'cluster is not reachable' } as Target['endpoint'];
    const ready = { name: 'member1' } as Target['endpoint'];
    const held: Target = { cluster: 'member1', controlPlane: false, endpoint: notReady };
    const other: Target = { cluster: 'member2', controlPlane: false, endpoint: ready };
    refreshEndpoints(
      new Map([
        ['member1', held],
        ['member2', other],
      ]),
      [{ cluster: 'member1', controlPlane: false, endpoint: ready }],
    );
    expect(held.endpoint).toBe(ready);
    expect(other.endpoint).toBe(ready);
  });
});

describe('membershipChange', () => {
  const t = (cluster: string) => ({ cluster, controlPlane: false }) as Target;
  const all = (ts: readonly Target[]) => [...ts];

  it('is nothing for the same clusters in another order', () => {
    expect(membershipChange(['a', 'b'], new Set(['a', 'b']), [t('b'), t('a')], all)).toBeUndefined();
  });

  it("names the watch's clusters that left and the joined ones its selectors choose", () => {
    const notC = (ts: readonly Target[]) => ts.filter((x) => x.cluster !== 'c');
    const ch = membershipChange(['a', 'b', 'x'], new Set(['a', 'b']), [t('a'), t('c'), t('d')], notC);
    expect(ch?.names).toEqual(['a', 'c', 'd']);
    // x left too, but the watch did not choose it: only b concerns it
    expect(ch?.left).toEqual(['b']);
    expect(ch?.joined.map((x) => x.cluster)).toEqual(['d']);
  });
});
