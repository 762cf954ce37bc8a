/**
 * An idle watch still writes now and then: a runtime that only notices a gone client on write (workerd)
 * would otherwise hold every upstream watch open forever. Idleness is counted in timer ticks, not timed:
 * workerd's clock stands still between I/O events, so Date.now() cannot measure it there.
 */
export const HEARTBEAT_MS = 5_000;
const TICKS = 5;

export class Heartbeat {
  private idleTicks = 0;
  private readonly timer: ReturnType<typeof setInterval>;

  /** `beat` runs after `everyMs` without a `touch()`; `tick` at every tick (a fifth of it), before. */
  constructor(beat: () => void, everyMs = HEARTBEAT_MS, tick?: () => void) {
    this.timer = setInterval(() => {
      tick?.();
      if (++this.idleTicks < TICKS) return;
      this.idleTicks = 0;
      beat();
    }, everyMs / TICKS);
  }

  /** Something was written: the stream is not idle. */
  touch(): void {
    this.idleTicks = 0;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
