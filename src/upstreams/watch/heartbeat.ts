/**
 * An idle watch still writes now and then: a runtime that only notices a gone client on write (workerd)
 * would otherwise hold every upstream watch open forever. Idleness is counted in timer ticks, not timed:
 * workerd's clock stands still between I/O events, so Date.now() cannot measure it there.
 *
 * Where timers may be shared across requests (Node: `shareHeartbeatTicks`, called by the platform), every
 * watch's heartbeat ticks from one interval, so an idle watch holds a set entry instead of a timer of its
 * own; on workerd a timer belongs to the request that made it, so each heartbeat keeps its own.
 */
export const HEARTBEAT_MS = 5_000;
const TICKS = 5;

/** the heartbeats that tick from the shared interval (Node), or undefined: one timer each */
let shared: { beats: Set<Heartbeat>; timer: ReturnType<typeof setInterval> | undefined } | undefined;

/** One interval for every heartbeat of the default period (for runtimes whose timers are not per request). */
export function shareHeartbeatTicks(): void {
  shared ??= { beats: new Set(), timer: undefined };
}

function tickAll(): void {
  if (!shared) return;
  for (const h of shared.beats)
    try {
      h.tick();
    } catch {
      // one watch's failure is its own: the others tick on
    }
}

export class Heartbeat {
  private idleTicks = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

  /** `beat` runs after `everyMs` without a `touch()`; `onTick` at every tick (a fifth of it), before. */
  constructor(
    private readonly beat: () => void,
    everyMs = HEARTBEAT_MS,
    private readonly onTick?: () => void,
  ) {
    if (shared && everyMs === HEARTBEAT_MS) {
      shared.beats.add(this);
      if (!shared.timer) {
        shared.timer = setInterval(tickAll, HEARTBEAT_MS / TICKS);
        // an idle watch alone does not keep a process alive that is otherwise done
        (shared.timer as { unref?: () => void }).unref?.();
      }
    } else this.timer = setInterval(() => this.tick(), everyMs / TICKS);
  }

  tick(): void {
    this.onTick?.();
    if (++this.idleTicks < TICKS) return;
    this.idleTicks = 0;
    this.beat();
  }

  /** Something was written: the stream is not idle. */
  touch(): void {
    this.idleTicks = 0;
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    else if (shared?.beats.delete(this) && shared.beats.size === 0 && shared.timer !== undefined) {
      clearInterval(shared.timer);
      shared.timer = undefined;
    }
  }
}
