/**
 * A merged watch's lines, handed on as one chunk once the reads at hand are done. By default at the end
 * of the tick (as TickBatch, src/util/lines.ts); Node's platform (src/platform/node.ts) has them wait for
 * the end of the event loop's poll phase (setImmediate), so the events of every upstream read that came
 * in together go out as one socket write and one HTTP chunk: a burst over 10 clusters read ~6.5 events an
 * upstream read and wrote a chunk each, the fleet paying a writev and the client a read per chunk
 * (bench/lib/burst-ab.ts: the client's reads per 100 events 14.8 → 10.9, fleet CPU per event 0.83-0.89×
 * in paired runs).
 */
import { joinRuns } from '../util/lines.ts';

let later: (f: () => void) => void = queueMicrotask;

/** when a merged watch's pending lines are written (the platform's; default: at the end of the tick) */
export function useWatchWriteScheduler(schedule: (f: () => void) => void): void {
  later = schedule;
}

export class ReadsBatch {
  private parts: Uint8Array[] | undefined;
  private readonly flushNow = () => this.flush();

  constructor(private readonly out: (chunk: Uint8Array) => void) {}

  add(piece: Uint8Array): void {
    if (!this.parts) {
      this.parts = [];
      later(this.flushNow);
    }
    this.parts.push(piece);
  }

  /** hands on what is pending at once (before a close) */
  flush(): void {
    const parts = this.parts;
    if (!parts) return;
    this.parts = undefined;
    if (parts.length === 1) this.out(parts[0]!);
    else for (const chunk of joinRuns(parts)) this.out(chunk);
  }
}
