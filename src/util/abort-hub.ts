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

/** a signal's calls and the one listener that runs them */
interface Hearing {
  calls: Set<() => void>;
  onAbort: () => void;
}

const hearing = new WeakMap<AbortSignal, Hearing>();

/** `fn` runs when `signal` aborts, unless {@link unhearAbort} took it back first. */
export function hearAbort(signal: AbortSignal, fn: () => void): void {
  if (signal.aborted) return;
  let h = hearing.get(signal);
  if (!h) {
    const calls = new Set<() => void>();
    const onAbort = () => {
      // one taken back by an earlier one's cancel does not run
      for (const f of [...calls]) if (calls.delete(f)) f();
      hearing.delete(signal);
    };
    h = { calls, onAbort };
    hearing.set(signal, h);
    signal.addEventListener('abort', onAbort, { once: true });
  }
  h.calls.add(fn);
}

/**
 * `fn` no longer runs when `signal` aborts. The last one taken back takes the listener off: Node holds
 * a derived signal (AbortSignal.any) strongly while it has an abort listener, so a listener left on an
 * idle upstream watch's signal that never aborts kept it (≈ 1.2 KiB) for the life of the process.
 */
export function unhearAbort(signal: AbortSignal, fn: () => void): void {
  const h = hearing.get(signal);
  if (!h?.calls.delete(fn) || h.calls.size) return;
  hearing.delete(signal);
  signal.removeEventListener('abort', h.onAbort);
}
