/**
 * Many calls hearing one signal through a single listener on it. A merged list over n clusters has n
 * upstream calls that each must end when the request's signal aborts; each adding its own listener put n
 * listeners on the signal (Node warns past 10), so every call listened on a signal derived from the
 * request's (AbortSignal.any, one per 8 calls) instead: with its listener 8–23 µs a call on Node 20
 * against 1–5 µs here (bench/lib/callbench.ts, 1,000 calls, 2 loaded cores).
 *
 * As addEventListener(…, { once: true }): a callback runs at most once, on the abort after it was added;
 * one added to a signal already aborted never runs (the caller checks `aborted` first, as before).
 */

const hearing = new WeakMap<AbortSignal, Set<() => void>>();

/** `fn` runs when `signal` aborts, unless {@link unhearAbort} took it back first. */
export function hearAbort(signal: AbortSignal, fn: () => void): void {
  if (signal.aborted) return;
  let calls = hearing.get(signal);
  if (!calls) {
    const set = new Set<() => void>();
    calls = set;
    hearing.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        // one taken back by an earlier one's cancel does not run
        for (const f of [...set]) if (set.delete(f)) f();
        hearing.delete(signal);
      },
      { once: true },
    );
  }
  calls.add(fn);
}

/** `fn` no longer runs when `signal` aborts. */
export function unhearAbort(signal: AbortSignal, fn: () => void): void {
  hearing.get(signal)?.delete(fn);
}
