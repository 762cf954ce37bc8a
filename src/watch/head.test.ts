import { describe, expect, it } from 'vitest';
import type { MergeStep } from './merge.ts';
import type { Source } from './sources.ts';
import { HEAD_GRACE_MS, lateFailure, openForHead, type Start } from './start.ts';

/** A source whose open answers what `answer` resolves to, when the test says so. */
function source(cluster: string) {
  let settle!: (r: Response | Error) => void;
  const answered = new Promise<Response | Error>((r) => {
    settle = r;
  });
  const none: MergeStep = { kind: 'emit', lines: [] };
  const src: Source = {
    label: `cluster ${cluster}`,
    clusters: [cluster],
    open: () => answered.then((r) => (r instanceof Error ? Promise.reject(r) : r)),
    event: () => none,
    gone: () => none,
    unavailable: () => none,
    resumed: () => none,
  };
  return {
    src,
    ok: () => settle(new Response('', { status: 200 })),
    fail: (code: number) => settle(status(code)),
  };
}

function status(code: number): Response {
  return new Response(
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message: `no ${code}` }),
    {
      status: code,
      headers: { 'content-type': 'application/json' },
    },
  );
}

const clustersOf = (starts: Start[]) => starts.map((s) => s.src.clusters[0]);

/** a grace given explicitly (the route's is HEAD_GRACE_MS) */
const BOUND = 50;

describe('openForHead: the head goes out at the first 200', () => {
  it('a slow source does not hold the head past the bound; it is handed over as late, and answers later', async () => {
    const fast = source('fast');
    const slow = source('slow');
    const t0 = performance.now();
    const head = openForHead([fast.src, slow.src], BOUND);
    fast.ok();
    const { starts, late } = await head;
    const waited = performance.now() - t0;
    expect(clustersOf(starts)).toEqual(['fast']);
    expect(late).toHaveLength(1);
    // the bound, not the slow source, decides: generous upper limit for a loaded machine
    expect(waited).toBeGreaterThanOrEqual(BOUND - 5);
    expect(waited).toBeLessThan(BOUND + 2_000);
    slow.fail(500);
    const s = await late[0]!;
    expect('res' in s).toBe(false);
    expect(lateFailure(s, false)).toBe('no 500');
  });

  it('every source answering before the bound: the head goes out at once, nothing late', async () => {
    const a = source('a');
    const b = source('b');
    a.ok();
    b.fail(503);
    const t0 = performance.now();
    const { starts, late } = await openForHead([a.src, b.src], 10_000);
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(clustersOf(starts)).toEqual(['a', 'b']);
    expect(late).toEqual([]);
  });

  it('no 200 yet: failures do not start the bound, every start is awaited (the all-failed 503 stays)', async () => {
    const a = source('a');
    const b = source('b');
    const head = openForHead([a.src, b.src], 1);
    a.fail(503);
    let decided = false;
    void head.then(() => {
      decided = true;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(decided).toBe(false);
    b.fail(503);
    const { starts, late } = await head;
    expect(clustersOf(starts)).toEqual(['a', 'b']);
    expect(late).toEqual([]);
  });

  it('strict mode (an infinite bound): the head waits for every source', async () => {
    const a = source('a');
    const b = source('b');
    const head = openForHead([a.src, b.src], Number.POSITIVE_INFINITY);
    a.ok();
    let decided = false;
    void head.then(() => {
      decided = true;
    });
    await new Promise((r) => setTimeout(r, BOUND + 30));
    expect(decided).toBe(false);
    b.ok();
    expect(clustersOf((await head).starts)).toEqual(['a', 'b']);
  });

  it('no sources: decided at once', async () => {
    expect(await openForHead([], HEAD_GRACE_MS)).toEqual({ starts: [], late: [] });
  });

  it("the route's grace: the head goes at the first 200 with what answered in the same turn; a later answer is late", async () => {
    // measured on the real bed (docs/benchmarks.md "The head at the first 200"): no timer's wait by default
    expect(HEAD_GRACE_MS).toBe(0);
    const fast = source('fast');
    const same = source('same');
    const slow = source('slow');
    const head = openForHead([fast.src, same.src, slow.src], HEAD_GRACE_MS);
    let decided = false;
    void head.then(() => {
      decided = true;
    });
    // two answers in one turn: both are in the head (the failure gets its Warning header)
    fast.ok();
    same.fail(503);
    // a timer's turn later: the head went out without the slow source (a 50 ms bound would still wait)
    await new Promise((r) => setTimeout(r, 5));
    expect(decided).toBe(true);
    const { starts, late } = await head;
    expect(clustersOf(starts)).toEqual(['fast', 'same']);
    expect(late).toHaveLength(1);
    slow.fail(500);
    expect(lateFailure(await late[0]!, false)).toBe('no 500');
  });

  it('a failure alone does not send the head, even with no grace: the first 200 does', async () => {
    const a = source('a');
    const b = source('b');
    const head = openForHead([a.src, b.src], HEAD_GRACE_MS);
    let decided = false;
    void head.then(() => {
      decided = true;
    });
    a.fail(500);
    await new Promise((r) => setTimeout(r, 20));
    expect(decided).toBe(false);
    b.ok();
    const { starts, late } = await head;
    expect(clustersOf(starts)).toEqual(['a', 'b']);
    expect(late).toEqual([]);
  });
});

describe('lateFailure: what a start answered after the head tells the client', () => {
  it('a 200 and a 404 (not served there) are nothing to tell; a refused fleet WatchList is not either', async () => {
    const ok = source('ok');
    ok.ok();
    const [s200] = (await openForHead([ok.src], 0)).starts;
    expect(lateFailure(s200!, false)).toBeUndefined();
    expect(lateFailure({ src: ok.src, status: 404, reason: 'not found' }, false)).toBeUndefined();
    expect(lateFailure({ src: ok.src, status: 400, reason: 'no watchlist' }, true)).toBeUndefined();
    expect(lateFailure({ src: ok.src, status: 0, reason: 'timed out' }, true)).toBe('timed out');
  });
});
