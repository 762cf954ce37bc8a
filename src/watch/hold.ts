/**
 * Holds one source's upstream watch for as long as the merged stream lives: reads its events into the
 * merger, and when the stream ends, breaks or answers garbage, resumes it with backoff (every reconnect
 * waits, so a watch that opens and ends at once costs a bounded rate). A 410 on resume (the cluster
 * compacted past where it stood) ends the merged stream with one ERROR event: the client relists. A source
 * that keeps failing is reported to the client once per outage (and again when it delivers), and a
 * WatchList stops waiting for its initial events.
 */

import { readStatus } from '../kube/status.ts';
import { Backoff, sleep } from './backoff.ts';
import type { WatchEvent } from './merge.ts';
import type { WatchOutput } from './output.ts';
import { WatchEventReader, type WatchEventSink } from './read.ts';
import { openOwn, type Source } from './sources.ts';
import type { Upstreams } from './upstreams.ts';

/** failed attempts in a row (≈ 0.4–0.7 s of backoff) after which the client is told */
export const UNAVAILABLE_AFTER = 3;

export interface HoldOptions {
  backoff?: Backoff;
  /** what aborts the watch's upstream requests (its signal made only when a resume needs one) */
  upstreams: Pick<Upstreams, 'aborted' | 'signal'>;
  /** WatchList: a source that cannot be held is not waited for (its initial events come when it is back) */
  sendInitialEvents: boolean;
  /** counts open upstream streams and resumes (the route's /metrics); absent: not counted */
  counts?: WatchCounts | undefined;
}

/** Why an upstream stream that was reading is re-opened (fleet_watch_resumes_total's `reason`). */
export type ResumeReason = 'ended' | 'broken' | 'error';

/** What a held source reports, per cluster of the source (a relay group's stream: each of its clusters). */
export interface WatchCounts {
  /** a stream of `clusters` is being read (+1) or no longer is (-1) */
  open(clusters: readonly string[], by: 1 | -1): void;
  /** a stream of `clusters` was cut while the merged stream lives: it is re-opened */
  resumed(clusters: readonly string[], reason: ResumeReason): void;
}

/**
 * Holds `src` from `first` (its answer at start), or from a resume when it had none. Resolves when the
 * merged stream is over (closed, or a 410 ended it).
 */
export function holdSource(
  src: Source,
  first: Response | undefined,
  out: WatchOutput,
  o: HoldOptions,
): Promise<void> {
  return new Promise<void>((resolve) => new Hold(src, out, o, resolve).start(first));
}

/** {@link holdSource} for a caller that does not wait for the end (no promise kept per source). */
export function startHold(src: Source, first: Response | undefined, out: WatchOutput, o: HoldOptions): void {
  new Hold(src, out, o, noop).start(first);
}

const noop = () => {};

/**
 * One source held: a state machine of callbacks rather than async functions, so an idle source keeps this
 * object and its body's reading only (no suspended frames, whose registers would keep the answer it came
 * with, its headers and Web body).
 */
class Hold implements WatchEventSink {
  /** made at the first failure: a source that never fails (most, most of the time) keeps none */
  private delays: Backoff | undefined;
  /** told the client it is unavailable (once per outage) */
  private told = false;
  /** the stream being read delivered an event other than an ERROR */
  private delivered = false;
  /** the stream being read sent an ERROR (why), and was stopped */
  private error: string | undefined;
  private reader: WatchEventReader | undefined;
  /** the stream being read is counted open (counts.open), until its end */
  private counted = false;

  constructor(
    private readonly src: Source,
    private readonly out: WatchOutput,
    private readonly o: HoldOptions,
    private readonly finish: () => void,
  ) {
    this.delays = o.backoff;
  }

  private get backoff(): Backoff {
    this.delays ??= new Backoff();
    return this.delays;
  }

  private get over(): boolean {
    return this.out.closed || this.o.upstreams.aborted;
  }

  start(first: Response | undefined): void {
    if (first) this.drain(first);
    else this.reopen();
  }

  /** the source kept failing: the client is told once per outage */
  private failed(why: string): void {
    if (this.told || this.backoff.failures < UNAVAILABLE_AFTER) return;
    this.told = true;
    this.out.emit(this.src.unavailable(`${why}; retrying`));
    if (this.o.sendInitialEvents) this.out.emit(this.src.gone());
  }

  /** waits out the backoff, then opens again (telling the client why, when it is time) */
  private retry(why: string | undefined): void {
    void sleep(this.backoff.next(), this.o.upstreams.signal).then(() => {
      if (why !== undefined) this.failed(why);
      this.reopen();
    });
  }

  /** Opens a resumed stream: reads it, ends on a 410 (the merged stream is over), or retries. */
  private reopen(): void {
    if (this.over) {
      this.finish();
      return;
    }
    openOwn(this.src, true, this.o.upstreams.signal).then(
      (res) => {
        if (res.ok) {
          this.drain(res);
          return;
        }
        readStatus(res).then(
          (status) => {
            if (status?.code === 410) {
              this.out.emit(this.src.event({ type: 'ERROR', object: status }));
              this.finish();
              return;
            }
            this.retry(status?.message ?? `HTTP ${res.status}`);
          },
          () => this.retry(`HTTP ${res.status}`),
        );
      },
      (err: unknown) => this.retry((err as { detail?: string }).detail ?? String(err)),
    );
  }

  /**
   * Reads one stream to its end: healthy when it delivered an event other than an ERROR; then, after the
   * backoff, the resume.
   */
  private drain(res: Response): void {
    const body = res.body;
    if (this.over) {
      void body?.cancel().catch(() => {});
      this.finish();
      return;
    }
    this.delivered = false;
    this.error = undefined;
    if (this.o.counts) {
      this.counted = true;
      this.o.counts.open(this.src.clusters, 1);
    }
    if (!body) {
      this.onEnd(new Error('watch answered without a body'));
      return;
    }
    const reader = new WatchEventReader(this);
    this.reader = reader;
    // the merged stream's close ends this reading (and the upstream request with it)
    this.out.own(reader);
    reader.read(body);
  }

  onEvent(ev: WatchEvent): boolean {
    if (this.out.closed) return false;
    this.out.emit(this.src.event(ev));
    // any other ERROR ends this cluster's stream (the merger drops it): resume
    if (ev.type === 'ERROR') {
      this.error = `watch ERROR ${ev.object?.message ?? ''}`.trim();
      return false;
    }
    if (!this.delivered) {
      this.delivered = true;
      // told unavailable and delivering again: the client is told it is back
      if (this.told) {
        this.told = false;
        this.out.emit(this.src.resumed());
      }
    }
    return true;
  }

  /** the stream ended, broke (`err`), or sent garbage: resume it */
  onEnd(err: unknown): void {
    if (this.reader) this.out.disown(this.reader);
    this.reader = undefined;
    if (this.counted) {
      this.counted = false;
      this.o.counts?.open(this.src.clusters, -1);
    }
    // a break after it delivered is an ordinary cut; before, it is why the attempt failed
    const why =
      err !== undefined && !this.delivered
        ? ((err as Error).message ?? String(err))
        : (this.error ?? (this.delivered ? undefined : 'watch ended at once'));
    if (why === undefined) this.delays?.reset();
    if (this.out.closed || this.o.upstreams.aborted) {
      this.finish();
      return;
    }
    this.o.counts?.resumed(
      this.src.clusters,
      this.error !== undefined ? 'error' : err !== undefined ? 'broken' : 'ended',
    );
    this.retry(why);
  }
}
