/**
 * Holds one source's upstream watch for as long as the merged stream lives: reads its events into the
 * merger, and when the stream ends, breaks or answers garbage, resumes it with backoff. A 410 on resume
 * (the cluster compacted past where it stood) ends the merged stream with one ERROR event: the client
 * relists.
 */
import { Backoff, sleep } from './backoff.ts';
import { readStatusBody, watchEvents } from './events.ts';
import type { WatchOutput } from './output.ts';
import type { Source } from './sources.ts';

/** Opens a resumed stream: the answer, 'expired' (410: the merged stream is over), or undefined (retry). */
async function reopen(src: Source, out: WatchOutput): Promise<Response | 'expired' | undefined> {
  let res: Response;
  try {
    res = await src.open(true);
  } catch {
    return undefined;
  }
  if (res.ok) return res;
  const status = await readStatusBody(res);
  if (status?.code === 410) {
    out.emit(src.event({ type: 'ERROR', object: status }));
    return 'expired';
  }
  return undefined;
}

/** Reads one stream to its end; true when it delivered at least one event. */
async function drain(src: Source, res: Response, out: WatchOutput): Promise<boolean> {
  let delivered = false;
  if (!res.body) return false;
  try {
    for await (const ev of watchEvents(res.body)) {
      if (out.closed) break;
      delivered = true;
      out.emit(src.event(ev));
      // any other ERROR ends this cluster's stream (the merger drops it): resume
      if (ev.type === 'ERROR') break;
    }
  } catch {
    // the upstream stream broke, or sent what is not a watch event: resume below
  }
  return delivered;
}

export interface HoldOptions {
  backoff?: Backoff;
  signal: AbortSignal;
}

/** Holds `src` from `first` (its answer at start), or from a resume when it had none. */
export async function holdSource(
  src: Source,
  first: Response | undefined,
  out: WatchOutput,
  o: HoldOptions,
): Promise<void> {
  const backoff = o.backoff ?? new Backoff();
  let res = first;
  while (!out.closed && !o.signal.aborted) {
    if (!res) {
      const r = await reopen(src, out);
      if (r === 'expired') return;
      if (!r) {
        await sleep(backoff.next(), o.signal);
        continue;
      }
      res = r;
    }
    if (await drain(src, res, out)) backoff.reset();
    res = undefined;
    // every reconnect waits: an upstream whose watch ends at once costs a bounded rate, not a busy loop
    if (!out.closed) await sleep(backoff.next(), o.signal);
  }
}
