/**
 * Holds one source's upstream watch for as long as the merged stream lives: reads its events into the
 * merger, and when the stream ends, breaks or answers garbage, resumes it with backoff (every reconnect
 * waits, so a watch that opens and ends at once costs a bounded rate). A 410 on resume (the cluster
 * compacted past where it stood) ends the merged stream with one ERROR event: the client relists. A source
 * that keeps failing is reported to the client once per outage (and again when it delivers), and a
 * WatchList stops waiting for its initial events.
 */

import { readStatus } from '../../kube/status.ts';
import { Backoff, sleep } from './backoff.ts';
import { readWatchEvents } from './events.ts';
import type { WatchOutput } from './output.ts';
import type { Source } from './sources.ts';

/** failed attempts in a row (≈ 0.4–0.7 s of backoff) after which the client is told */
export const UNAVAILABLE_AFTER = 3;

type Attempt = { ok: true } | { ok: false; why: string };

/** Opens a resumed stream: the answer, 'expired' (410: the merged stream is over), or why it failed. */
async function reopen(src: Source, out: WatchOutput): Promise<Response | 'expired' | string> {
  let res: Response;
  try {
    res = await src.open(true);
  } catch (err) {
    return (err as { detail?: string }).detail ?? String(err);
  }
  if (res.ok) return res;
  const status = await readStatus(res);
  if (status?.code === 410) {
    out.emit(src.event({ type: 'ERROR', object: status }));
    return 'expired';
  }
  return status?.message ?? `HTTP ${res.status}`;
}

/**
 * Reads one stream to its end: healthy when it delivered an event other than an ERROR (`delivering`
 * runs at the first such event).
 */
async function drain(
  src: Source,
  res: Response | undefined,
  out: WatchOutput,
  delivering: () => void,
): Promise<Attempt> {
  let delivered = false;
  let error: string | undefined;
  if (!res?.body) return { ok: false, why: 'watch answered without a body' };
  try {
    const reading = readWatchEvents(res.body, (ev) => {
      if (out.closed) return false;
      out.emit(src.event(ev));
      // any other ERROR ends this cluster's stream (the merger drops it): resume
      if (ev.type === 'ERROR') {
        error = `watch ERROR ${ev.object?.message ?? ''}`.trim();
        return false;
      }
      if (!delivered) delivering();
      delivered = true;
      return true;
    });
    // while it waits, an idle watch keeps the reading only (not the answer, its headers and Web body)
    res = undefined;
    await reading;
  } catch (err) {
    // the upstream stream broke, or sent what is not a watch event: resume below
    if (!delivered) return { ok: false, why: (err as Error).message ?? String(err) };
  }
  if (error !== undefined) return { ok: false, why: error };
  return delivered ? { ok: true } : { ok: false, why: 'watch ended at once' };
}

export interface HoldOptions {
  backoff?: Backoff;
  signal: AbortSignal;
  /** WatchList: a source that cannot be held is not waited for (its initial events come when it is back) */
  sendInitialEvents: boolean;
}

/** Holds `src` from `first` (its answer at start), or from a resume when it had none. */
export async function holdSource(
  src: Source,
  first: Response | undefined,
  out: WatchOutput,
  o: HoldOptions,
): Promise<void> {
  const backoff = o.backoff ?? new Backoff();
  let told = false;
  const failed = (why: string) => {
    if (told || backoff.failures < UNAVAILABLE_AFTER) return;
    told = true;
    out.emit(src.unavailable(`${why}; retrying`));
    if (o.sendInitialEvents) out.emit(src.gone());
  };
  // told unavailable and delivering again: the client is told it is back
  const back = () => {
    if (!told) return;
    told = false;
    out.emit(src.resumed());
  };
  let res = first;
  // an idle watch holds its body's reader only, not the answer (its headers) it came with
  first = undefined;
  while (!out.closed && !o.signal.aborted) {
    if (!res) {
      const r = await reopen(src, out);
      if (r === 'expired') return;
      if (typeof r === 'string') {
        await sleep(backoff.next(), o.signal);
        failed(r);
        continue;
      }
      res = r;
    }
    const draining = drain(src, res, out, back);
    res = undefined;
    const attempt = await draining;
    if (attempt.ok) backoff.reset();
    if (out.closed) return;
    await sleep(backoff.next(), o.signal);
    if (!attempt.ok) failed(attempt.why);
  }
}
