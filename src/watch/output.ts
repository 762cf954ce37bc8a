/**
 * The merged watch's response body: where merge steps are written, the heartbeat, `timeoutSeconds`, and
 * the one close that ends everything (the client left, the timeout, a 410, a client that stops reading).
 */

import { type PushWriter, pushBody } from '../util/chunks.ts';
import { bodyEnded, type EndListeners, ended, tellsEnd } from '../util/ends.ts';
import { TickBatch } from '../util/lines.ts';
import { Heartbeat } from './heartbeat.ts';
import type { LazyLine, MergeStep } from './merge.ts';

const enc = new TextEncoder();

/**
 * Past this many bytes queued for the client the upstream watches are paused until it drains: a slow
 * reader holds the fleet back as TCP holds kube-apiserver back for a direct watch.
 */
export const HIGH_WATER_BYTES = 1024 * 1024;
/**
 * A client that takes nothing for this long while paused is dropped, as kube ends a watch whose client
 * stops reading: time, not bytes, since a paused watch queues no more than the chunks in flight.
 */
export const STALLED_MS = 60_000;
/**
 * The last resort should pausing not hold (chunks in flight from many clusters): far above the mark,
 * reachable only by a client that does not drain.
 */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const byteSize = { size: (c: Uint8Array) => c.byteLength, highWaterMark: 0 };

interface Owned {
  cancel(): void;
  pause?(): void;
  resume?(): void;
}

export interface WatchOutputOptions {
  /** ends the stream cleanly after this long (already clamped to what a timer can hold) */
  timeoutMs: number | undefined;
  /** what an idle stream writes: a bookmark when the client takes them and one can be made, else a newline */
  heartbeatLine: () => string | undefined;
  /** runs once when the stream closes, for whatever reason: close the upstream watches */
  onClose: () => void;
}

export class WatchOutput {
  /** the body as a Web stream this writer feeds (where the runtime has no push body of its own) */
  private web: ReadableStream<Uint8Array> | undefined;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** the runtime's own body (Node: a Node stream behind the Web one, which is handed over once) */
  private pushed: PushWriter | undefined;
  private answer: ReadableStream<Uint8Array> | undefined;
  private readonly ends: EndListeners;
  private done = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: Heartbeat | undefined;
  /** the latest merged bookmark not yet sent: sent at the next tick, dropped if an event goes first */
  private bookmark: string | LazyLine | undefined;
  /** the lines of this tick, written as one chunk at its end (a burst: one write per tick, not per line) */
  private readonly batch = new TickBatch(
    (chunk) => this.send(chunk),
    (parts, bytes) => this.sendAll(parts, bytes),
  );
  /** what the close ends besides: the upstream readings under way */
  private readonly owned = new Set<Owned>();
  /** the upstream readings are paused: the client is behind */
  private paused = false;
  private stall: ReturnType<typeof setTimeout> | undefined;

  /** `start` runs once the body exists: it starts the sources, which write through `emit`. */
  constructor(
    private readonly o: WatchOutputOptions,
    start: (out: WatchOutput) => void,
  ) {
    const pushed = pushBody(() => this.close());
    if (pushed) {
      this.pushed = pushed.writer;
      this.answer = pushed.body;
      this.ends = tellsEnd(pushed.body);
      this.begin(start);
      return;
    }
    // run once, then let go: the stream keeps its source's closures (and what they hold) for its life
    let begin: typeof start | undefined = start;
    this.web = new ReadableStream<Uint8Array>(
      {
        start: (ctl) => {
          this.controller = ctl;
          const run = begin;
          begin = undefined;
          if (run) this.begin(run);
        },
        // the client took what was queued: read the upstreams again
        pull: () => this.drained(),
        cancel: () => this.close(),
      },
      byteSize,
    );
    this.answer = this.web;
    this.ends = tellsEnd(this.web);
    // closed by a source that failed at once, inside the stream's start, before the stream was kept here
    if (this.done) ended(this.ends);
  }

  private begin(start: (out: WatchOutput) => void): void {
    start(this);
    if (this.done) return;
    const o = this.o;
    if (o.timeoutMs !== undefined) this.timer = setTimeout(() => this.close(), o.timeoutMs);
    // a bare newline is whitespace to JSON watch decoders
    this.heartbeat = new Heartbeat(
      () => this.write(o.heartbeatLine() ?? '\n'),
      undefined,
      () => this.flushBookmark(),
    );
  }

  /** The response body (the writer keeps what it writes to, not necessarily this stream). */
  get body(): ReadableStream<Uint8Array> {
    return this.answer ?? this.web!;
  }

  /** The response body, handed over: a runtime's push body is then no longer kept here. */
  takeBody(): ReadableStream<Uint8Array> {
    const b = this.body;
    this.answer = undefined;
    return b;
  }

  get closed(): boolean {
    return this.done;
  }

  emit(step: MergeStep): void {
    if (this.done) return;
    if (step.kind === 'expired') {
      this.write(step.line);
      this.close();
      return;
    }
    if (step.lines.length) this.bookmark = undefined;
    for (const line of step.lines) this.write(line);
    // clusters' bookmarks coalesce: one merged bookmark a tick at most, whatever the number of clusters
    if (step.bookmark) this.bookmark = step.bookmark;
  }

  /** cancelled at the close (at once if closed already): an upstream reading that no signal ends */
  own(reading: Owned): void {
    if (this.done) reading.cancel();
    else {
      this.owned.add(reading);
      if (this.paused) reading.pause?.();
    }
  }

  disown(reading: Owned): void {
    this.owned.delete(reading);
  }

  private flushBookmark(): void {
    const b = this.bookmark;
    this.bookmark = undefined;
    // a lazy bookmark's line is made now (merge.ts offered)
    if (b) this.write(String(b));
  }

  close(): void {
    if (this.done) return;
    this.batch.flush();
    if (this.done) return;
    this.done = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.stall !== undefined) clearTimeout(this.stall);
    this.heartbeat?.stop();
    for (const r of this.owned) r.cancel();
    this.owned.clear();
    this.o.onClose();
    if (this.web) bodyEnded(this.web);
    else if (this.ends) ended(this.ends);
    try {
      if (this.pushed) this.pushed.close();
      else this.controller?.close();
    } catch {
      // already closed or errored
    }
  }

  /** `line`: text, or bytes already encoded (events the merger wrote from their bytes) */
  private write(line: string | Uint8Array): void {
    if (this.done) return;
    this.heartbeat?.touch();
    this.batch.add(typeof line === 'string' ? enc.encode(line) : line);
  }

  /** a tick's lines as one piece, where the runtime's push body takes them so (Node: one chunk frame) */
  private sendAll(parts: Uint8Array[], bytes: number): boolean {
    if (this.done) return true;
    const queued = this.pushed?.pushAll?.(parts, bytes);
    if (queued === undefined) return false;
    this.queued(queued);
    return true;
  }

  private send(bytes: Uint8Array): void {
    if (this.done) return;
    let queued: number;
    if (this.pushed) queued = this.pushed.push(bytes);
    else {
      try {
        this.controller?.enqueue(bytes);
      } catch {
        this.close();
        return;
      }
      queued = -(this.controller?.desiredSize ?? 0);
    }
    this.queued(queued);
  }

  private queued(bytes: number): void {
    if (bytes > MAX_QUEUED_BYTES) this.close();
    else if (bytes > HIGH_WATER_BYTES) this.pause();
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    for (const r of this.owned) r.pause?.();
    this.stall = setTimeout(() => this.close(), STALLED_MS);
    // a paused watch alone does not keep a process alive that is otherwise done
    (this.stall as { unref?: () => void }).unref?.();
    // a Web body says so on its next pull (drained); a runtime's push body when its backlog is written
    this.pushed?.onDrain?.(() => this.drained());
  }

  private drained(): void {
    if (!this.paused || this.done) return;
    this.paused = false;
    if (this.stall !== undefined) clearTimeout(this.stall);
    this.stall = undefined;
    for (const r of this.owned) r.resume?.();
  }
}
