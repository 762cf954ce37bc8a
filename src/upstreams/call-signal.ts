/**
 * The signal an upstream call listens on (./client.ts sends with it; ./cache/shared.ts derives it for a
 * pulled call it coalesces): a file of its own so both import it without a cycle.
 */

/** Calls that listen on one signal derived from the caller's (see callSignal). */
export const CALLS_PER_SIGNAL = 8;

const derivedSignals = new WeakMap<AbortSignal, { signal: AbortSignal; calls: number }>();

/**
 * The signal a call listens on, following the caller's: every transport listens to the signal it is
 * given for as long as the answer streams, and Node warns (MaxListenersExceededWarning) past 10 abort
 * listeners on one signal, which a fan-out or a merged watch over 10+ clusters would put on the
 * request's. AbortSignal.any adds no listener to its source (it keeps a weak reference instead), but one
 * per call costs ≈ 25 µs and a weak reference the GC must trace: up to CALLS_PER_SIGNAL calls share one.
 */
export function callSignal(caller: AbortSignal | undefined): AbortSignal | undefined {
  if (!caller || caller.aborted) return caller;
  let d = derivedSignals.get(caller);
  if (!d || d.calls >= CALLS_PER_SIGNAL) {
    d = { signal: AbortSignal.any([caller]), calls: 0 };
    derivedSignals.set(caller, d);
  }
  d.calls++;
  return d.signal;
}
