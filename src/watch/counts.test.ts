import { describe, expect, it } from 'vitest';
import { Backoff } from './backoff.ts';
import { holdSource, type ResumeReason, type WatchCounts } from './hold.ts';
import type { MergeStep } from './merge.ts';
import { WatchOutput } from './output.ts';
import type { Source } from './sources.ts';
import { Upstreams } from './upstreams.ts';

const enc = new TextEncoder();
const none = (): MergeStep => ({ kind: 'emit', lines: [] });
const event = (n: number) =>
  `${JSON.stringify({ type: 'ADDED', object: { metadata: { name: `o${n}` } } })}\n`;

/** records what a held source reports: the open streams per cluster now, and every resume */
function recorder() {
  const open = new Map<string, number>();
  const resumes: Array<[string, ResumeReason]> = [];
  const counts: WatchCounts = {
    open(clusters, by) {
      for (const c of clusters) open.set(c, (open.get(c) ?? 0) + by);
    },
    resumed(clusters, reason) {
      for (const c of clusters) resumes.push([c, reason]);
    },
  };
  return { open, resumes, counts };
}

/** a stream of `lines`, then (`end`) a clean end, a break, or none (it stays open) */
function stream(lines: string[], end: 'close' | 'error' | 'open'): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(c) {
      for (const l of lines) c.enqueue(enc.encode(l));
      if (end === 'close') c.close();
      else if (end === 'error') c.error(new TypeError('terminated'));
    },
  });
}

function output(ac: Upstreams): WatchOutput {
  return new WatchOutput(
    { timeoutMs: undefined, heartbeatLine: () => undefined, onClose: () => ac.abort() },
    () => {},
  );
}

describe('held sources count their upstream streams and resumes', () => {
  it('a stream cut (clean end, break, ERROR) counts one resume by why; the open gauge ends at 0', async () => {
    const answers = [
      new Response(stream([event(1)], 'error'), { status: 200 }),
      new Response(
        stream(
          [event(2), `${JSON.stringify({ type: 'ERROR', object: { code: 500, message: 'boom' } })}\n`],
          'open',
        ),
        { status: 200 },
      ),
      new Response(stream([event(3)], 'open'), { status: 200 }),
    ];
    const src: Source = {
      label: 'cluster x',
      clusters: ['x'],
      open: async () => answers.shift() ?? new Response(stream([], 'open'), { status: 200 }),
      event: none,
      gone: none,
      unavailable: none,
      resumed: none,
    };
    const r = recorder();
    const ac = new Upstreams();
    const out = output(ac);
    const held = holdSource(src, new Response(stream([event(0)], 'close'), { status: 200 }), out, {
      upstreams: ac,
      sendInitialEvents: false,
      backoff: new Backoff({ initialMs: 2, maxMs: 10, random: () => 0.5 }),
      counts: r.counts,
    });
    const deadline = Date.now() + 10_000;
    while (answers.length && Date.now() < deadline) await new Promise((res) => setTimeout(res, 10));
    // the fourth stream (event 3) is being read: one open, three cuts before it
    await new Promise((res) => setTimeout(res, 50));
    expect(r.open.get('x')).toBe(1);
    expect(r.resumes).toEqual([
      ['x', 'ended'],
      ['x', 'broken'],
      ['x', 'error'],
    ]);
    out.close();
    await held;
    // the close is no cut: no resume counted, the stream no longer open
    expect(r.open.get('x')).toBe(0);
    expect(r.resumes).toHaveLength(3);
  });

  it('a relay group’s stream counts for each of its clusters', async () => {
    const src: Source = {
      label: 'clusters a, b',
      clusters: ['a', 'b'],
      open: async () => new Response(stream([], 'open'), { status: 200 }),
      event: none,
      gone: none,
      unavailable: none,
      resumed: none,
    };
    const r = recorder();
    const ac = new Upstreams();
    const out = output(ac);
    const held = holdSource(src, new Response(stream([event(1)], 'open'), { status: 200 }), out, {
      upstreams: ac,
      sendInitialEvents: false,
      counts: r.counts,
    });
    expect([r.open.get('a'), r.open.get('b')]).toEqual([1, 1]);
    out.close();
    await held;
    expect([r.open.get('a'), r.open.get('b')]).toEqual([0, 0]);
    expect(r.resumes).toEqual([]);
  });
});
