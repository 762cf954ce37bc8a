/**
 * The merged watch's response body: where merge steps are written, the heartbeat, `timeoutSeconds`, and
 * the one close that ends everything (the client left, the timeout, a 410, a client that stops reading).
 */
import type { MergeStep } from '../../merge/watchmerge.ts';
import { Heartbeat } from './heartbeat.ts';

const enc = new TextEncoder();

/** a client this far behind (queued chunks) is dropped, as kube ends a watch whose client stops reading */
const MAX_QUEUED = 10_000;

export interface WatchOutputOptions {
  /** ends the stream cleanly after this long (already clamped to what a timer can hold) */
  timeoutMs: number | undefined;
  /** what an idle stream writes: a bookmark when the client takes them and one can be made, else a newline */
  heartbeatLine: () => string | undefined;
  /** runs once when the stream closes, for whatever reason: close the upstream watches */
  onClose: () => void;
}

export class WatchOutput {
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private done = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private heartbeat: Heartbeat | undefined;

  /** `start` runs once the body exists: it starts the sources, which write through `emit`. */
  constructor(
    private readonly o: WatchOutputOptions,
    start: (out: WatchOutput) => void,
  ) {
    this.body = new ReadableStream<Uint8Array>({
      start: (ctl) => {
        this.controller = ctl;
        start(this);
        if (this.done) return;
        if (o.timeoutMs !== undefined) this.timer = setTimeout(() => this.close(), o.timeoutMs);
        // a bare newline is whitespace to JSON watch decoders
        this.heartbeat = new Heartbeat(() => this.write(o.heartbeatLine() ?? '\n'));
      },
      cancel: () => this.close(),
    });
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
    for (const line of step.lines) this.write(line);
  }

  close(): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.heartbeat?.stop();
    this.o.onClose();
    try {
      this.controller.close();
    } catch {
      // already closed or errored
    }
  }

  private write(line: string): void {
    if (this.done) return;
    this.heartbeat?.touch();
    try {
      this.controller.enqueue(enc.encode(line));
    } catch {
      this.close();
      return;
    }
    if ((this.controller.desiredSize ?? 0) < -MAX_QUEUED) this.close();
  }
}
