/**
 * Reconnect delays for one upstream watch: capped exponential with jitter (as client-go's reflector backs
 * off), so a cluster whose watch opens and ends at once, or answers garbage, costs a bounded number of
 * reconnects a second instead of a busy loop. Every reconnect waits at least half the initial delay.
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** [0, 1): injectable for tests */
  random: () => number;
}

export const WATCH_BACKOFF: BackoffOptions = { initialMs: 100, maxMs: 5_000, random: Math.random };

export class Backoff {
  private current: number;
  /** attempts since the last healthy stream */
  failures = 0;

  constructor(private readonly o: BackoffOptions = WATCH_BACKOFF) {
    this.current = o.initialMs;
  }

  /** The delay before the next attempt ("equal jitter": half fixed, half random), and one more failure. */
  next(): number {
    const d = this.current / 2 + this.o.random() * (this.current / 2);
    this.current = Math.min(this.current * 2, this.o.maxMs);
    this.failures++;
    return d;
  }

  /** The stream delivered: the next break starts from the initial delay again. */
  reset(): void {
    this.current = this.o.initialMs;
    this.failures = 0;
  }
}

/** Waits `ms`, or less when `signal` aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
