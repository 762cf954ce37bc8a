/**
 * An idle watch still writes now and then: a runtime that only notices a gone client on write (workerd)
 * would otherwise hold every upstream watch open forever. Idleness is counted in timer ticks, not timed:
 * workerd's clock stands still between I/O events, so Date.now() cannot measure it there.
 *
 * Where timers may be shared across requests (Node: `shareHeartbeatTicks`, called by the platform), every
 * watch's heartbeat ticks from one interval, so an idle watch holds a set entry instead of a timer of its
 * own; on workerd a timer belongs to the request that made it, so each heartbeat keeps its own.
 *
 * The shared heartbeats are dealt, in turn, into SLOTS groups, and the interval ticks one group at a time,
 * SLOTS times a tick period: each heartbeat still ticks once a period, but a thousand idle watches no
 * longer all write their heartbeat in one task. Ticked together, 1,000 merged watches held the fleet's
 * event loop 14-33 ms once a second (perf_hooks event-loop delay, bench merged-watch), which every event
 * arriving then waited for: the watch case's p99.
 */
export const HEARTBEAT_MS = 5_000;
const TICKS = 5;
export const SLOTS = 20;

interface Shared {
  slots: Set<Heartbeat>[];
  /** heartbeats in all slots */
  size: number;
  /** the slot the next heartbeat joins (round robin: the slots stay within one of each other) */
  deal: number;
  /** the slot the next interval ticks */
  turn: number;
  timer: ReturnType<typeof setInterval> | undefined;
}

/** the heartbeats that tick from the shared interval (Node), or undefined: one timer each */
let shared: Shared | undefined;

/** One interval for every heartbeat of the default period (for runtimes whose timers are not per request). */
export function shareHeartbeatTicks(): void {
  shared ??= {
    slots: Array.from({ length: SLOTS }, () => new Set<Heartbeat>()),
    size: 0,
    deal: 0,
    turn: 0,
    timer: undefined,
  };
}

function tickSlot(): void {
  if (!shared) return;
  const slot = shared.slots[shared.turn]!;
  shared.turn = (shared.turn + 1) % SLOTS;
  for (const h of slot)
    try {
      h.tick();
    } catch {
      // one watch's failure is its own: the others tick on
    }
}

export class Heartbeat {
  private idleTicks = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** the shared slot this heartbeat ticks in */
  private slot: Set<Heartbeat> | undefined;

  /** `beat` runs after `everyMs` without a `touch()`; `onTick` at every tick (a fifth of it), before. */
  constructor(
    private readonly beat: () => void,
    everyMs = HEARTBEAT_MS,
    private readonly onTick?: () => void,
  ) {
    if (shared && everyMs === HEARTBEAT_MS) {
      this.slot = shared.slots[shared.deal]!;
      shared.deal = (shared.deal + 1) % SLOTS;
      this.slot.add(this);
      shared.size++;
      if (!shared.timer) {
        shared.timer = setInterval(tickSlot, HEARTBEAT_MS / TICKS / SLOTS);
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
    else if (shared && this.slot?.delete(this) && --shared.size === 0 && shared.timer !== undefined) {
      clearInterval(shared.timer);
      shared.timer = undefined;
    }
    this.slot = undefined;
  }
}
