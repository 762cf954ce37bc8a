/**
 * One shared upstream call and its readers (src/upstreams/coalesce.ts explains the policy): the bytes read
 * so far, who has taken how many, when to read more, whom to detach. Plain data only crosses between the
 * requests that read it.
 */

export class SlowReaderError extends Error {
  override name = 'SlowReaderError';
}

/** The request that read a shared answer for everyone went away (Workers): read it again alone. */
export class SharedCallLostError extends Error {
  override name = 'SharedCallLostError';
}

export interface Head {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
}

export interface CoalesceOptions {
  /** a reader this far behind the bytes read is detached */
  lagBytes: number;
  /** the body is kept whole (joinable from byte 0, storable) while it is at most this big */
  keepBytes: number;
  /** all calls' kept bytes together stay under this */
  budgetBytes: number;
  /** told when a slow reader is detached */
  onDetached?: () => void;
  /**
   * The call lives and dies with the request that started it (Workers: its upstream body is that
   * request's I/O object, cancelled with it): when that request leaves, the others fail with a
   * {@link SharedCallLostError} (one still waiting for the head starts a call of its own) instead of
   * waiting on a read that will never come.
   */
  ownerBound?: boolean;
  /**
   * with `ownerBound`: readers waiting this long for the next bytes give the call up as lost (workerd may
   * tear the starting request down without running any of its code, so its leaving is not always seen)
   */
  stallMs?: number;
}

/** Called once the whole body is read, if it was kept whole; readers see the end after it settles. */
export type OnComplete = (head: Head, body: Uint8Array[]) => Promise<void> | void;

/** What a call needs of the coalescer that made it: the options, and the kept-bytes budget they share. */
export interface CallOwner {
  readonly opts: CoalesceOptions;
  kept: number;
}

export interface Reader {
  cursor: number;
  detached: boolean;
  wake?: () => void;
}

export class SharedCall {
  private readonly ac = new AbortController();
  readonly head: Promise<Head>;
  private settleHead!: { ok: (h: Head) => void; fail: (e: unknown) => void };
  /** retained chunks, in order, each with its offset in the body */
  private chunks: Array<{ at: number; bytes: Uint8Array }> = [];
  private total = 0;
  private readonly readers = new Set<Reader>();
  private state: 'reading' | 'done' | 'failed' | 'abandoned' = 'reading';
  private failure: unknown;
  /** the body is still whole in `chunks` (joinable, storable) */
  private whole = true;
  private keptHere = 0;
  private demand?: () => void;
  /** when the last bytes came (ownerBound stall detection) */
  private progressAt = Date.now();
  /** the reader of the request that started the call */
  private starter?: Reader;

  constructor(
    private readonly owner: CallOwner,
    private readonly forget: () => void,
    private readonly onComplete?: OnComplete,
  ) {
    this.head = new Promise<Head>((ok, fail) => {
      this.settleHead = { ok, fail };
    });
    // a head nobody awaits any more (every asker left) must not be an unhandled rejection
    this.head.catch(() => {});
  }

  get joinable(): boolean {
    return this.state === 'reading' && this.whole;
  }

  attach(): Reader {
    const r: Reader = { cursor: 0, detached: false };
    this.readers.add(r);
    this.starter ??= r;
    return r;
  }

  /**
   * `r` reads no more. `aborted`: its request went away (on Workers the call's I/O goes with it); a reader
   * that merely stopped (a list reader at the closing bracket) leaves the call running for the others and
   * the store, and if its request's context ends anyway, the others notice the silence (stallMs).
   */
  leave(r: Reader, aborted = false): void {
    if (!this.readers.delete(r)) return;
    if (aborted && r === this.starter) this.starterLeft();
    if (this.readers.size > 0 || this.state !== 'reading') return;
    // the last reader went away (a list reader stops at the closing bracket, a client left): an answer
    // still whole is read on to its end for the store (bounded by keepBytes), and newcomers may join it
    if (this.whole && this.onComplete) {
      this.demand?.();
      return;
    }
    this.abandon();
  }

  private checkStall(): void {
    const { ownerBound, stallMs } = this.owner.opts;
    if (ownerBound && stallMs !== undefined && Date.now() - this.progressAt > stallMs) this.starterLeft();
  }

  /** Workers: the starting request's I/O goes with it, so the others must not wait for it. */
  private starterLeft(): void {
    if (!this.owner.opts.ownerBound || this.state !== 'reading') return;
    const lost = new SharedCallLostError(
      'the request reading this shared upstream answer went away; read it again',
    );
    this.settleHead.fail(lost);
    // the bytes already read stay readable (a list reader may need no more); past them, the error
    this.state = 'failed';
    this.failure = lost;
    this.forget();
    this.release();
    this.wakeAll();
    this.ac.abort(new DOMException('the request reading the shared call went away', 'AbortError'));
  }

  /** Nobody wants the answer any more: the cluster may stop sending it. */
  private abandon(): void {
    this.state = 'abandoned';
    this.release();
    this.forget();
    this.ac.abort(new DOMException('every reader of the shared call went away', 'AbortError'));
    this.demand?.();
  }

  /** Reads the upstream answer, in the context of the request that started the call. */
  async run(start: (signal: AbortSignal) => Promise<Response>): Promise<void> {
    let res: Response;
    try {
      res = await start(this.ac.signal);
    } catch (err) {
      this.settleHead.fail(err);
      this.end('failed', err);
      return;
    }
    const head: Head = { status: res.status, statusText: res.statusText, headers: [...res.headers] };
    this.settleHead.ok(head);
    const body = res.body?.getReader();
    try {
      while (body) {
        await this.wanted();
        if (this.state !== 'reading') {
          await body.cancel().catch(() => {});
          return;
        }
        const { done, value } = await body.read();
        if (done) break;
        if (value.length > 0) this.append(value);
      }
    } catch (err) {
      this.end('failed', err);
      return;
    }
    if (this.whole && this.onComplete && this.state === 'reading') {
      try {
        await this.onComplete(
          head,
          this.chunks.map((c) => c.bytes),
        );
      } catch {
        // storing is best effort: the readers get their answer either way
      }
    }
    this.end('done');
  }

  /** A stream over this call's bytes for one reader. */
  stream(r: Reader, signal?: AbortSignal): ReadableStream<Uint8Array> {
    let onAbort: (() => void) | undefined;
    const finish = (aborted = false) => {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      this.leave(r, aborted);
    };
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          if (!signal) return;
          onAbort = () => {
            finish(true);
            try {
              controller.error(signal.reason);
            } catch {
              // already closed
            }
          };
          signal.addEventListener('abort', onAbort, { once: true });
        },
        pull: async (controller) => {
          for (;;) {
            if (r.detached) {
              finish();
              controller.error(
                new SlowReaderError(
                  `fell more than ${this.owner.opts.lagBytes} bytes behind the other readers of a shared upstream answer`,
                ),
              );
              return;
            }
            const chunk = this.chunkAt(r.cursor);
            if (chunk) {
              r.cursor += chunk.length;
              controller.enqueue(chunk);
              return;
            }
            if (this.state === 'failed' || this.state === 'abandoned') {
              finish();
              controller.error(this.failure ?? new Error('the shared upstream answer was cancelled'));
              return;
            }
            if (this.state === 'done') {
              finish();
              controller.close();
              return;
            }
            await awake(
              new Promise<void>((wake) => {
                r.wake = wake;
                this.demand?.();
              }),
              this.owner.opts.ownerBound,
              () => this.checkStall(),
            );
          }
        },
        cancel: () => finish(),
      },
      { highWaterMark: 0 },
    );
  }

  /** Resolves when some reader wants bytes not read yet, or the call is over. */
  private wanted(): Promise<void> {
    const someoneWaits = () => {
      // nobody left but the store: read on
      if (this.readers.size === 0) return true;
      for (const r of this.readers) if (!r.detached && r.cursor >= this.total) return true;
      return false;
    };
    if (this.state !== 'reading' || someoneWaits()) return Promise.resolve();
    return new Promise((resolve) => {
      this.demand = () => {
        if (this.state !== 'reading' || someoneWaits()) {
          this.demand = undefined;
          resolve();
        }
      };
    });
  }

  private append(bytes: Uint8Array): void {
    this.progressAt = Date.now();
    this.chunks.push({ at: this.total, bytes });
    this.total += bytes.length;
    const o = this.owner.opts;
    if (this.whole) {
      if (this.total <= o.keepBytes && this.owner.kept + bytes.length <= o.budgetBytes) {
        this.owner.kept += bytes.length;
        this.keptHere += bytes.length;
      } else {
        this.whole = false;
        this.release();
        // nobody can join from byte 0 any more: the next asker starts a call of its own
        this.forget();
        if (this.readers.size === 0) {
          this.abandon();
          return;
        }
      }
    }
    // behind whom: the fastest reader (one chunk bigger than lagBytes must not detach everyone)
    let fastest = 0;
    for (const r of this.readers) if (r.cursor > fastest) fastest = r.cursor;
    let min = this.total;
    for (const r of this.readers) {
      if (fastest - r.cursor > o.lagBytes) {
        r.detached = true;
        this.readers.delete(r);
        o.onDetached?.();
        r.wake?.();
      } else if (r.cursor < min) min = r.cursor;
    }
    if (!this.whole)
      while (this.chunks.length && this.chunks[0]!.at + this.chunks[0]!.bytes.length <= min)
        this.chunks.shift();
    this.wakeAll();
  }

  private chunkAt(cursor: number): Uint8Array | undefined {
    // readers take whole chunks from 0, so a cursor is always some chunk's offset
    const cs = this.chunks;
    let lo = 0;
    let hi = cs.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = cs[mid]!.at;
      if (at === cursor) return cs[mid]!.bytes;
      if (at < cursor) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  private end(state: 'done' | 'failed', err?: unknown): void {
    if (this.state === 'reading') {
      this.state = state;
      this.failure = err;
    }
    this.forget();
    // a failure keeps the bytes read so far readable, as starterLeft does: a reader that had not caught
    // up sees its body begin and then break (and can read it again from there), never an error at byte 0
    this.release();
    this.wakeAll();
  }

  private release(): void {
    this.owner.kept -= this.keptHere;
    this.keptHere = 0;
  }

  private wakeAll(): void {
    for (const r of this.readers) {
      const w = r.wake;
      r.wake = undefined;
      w?.();
    }
  }
}

/** `p`, or the signal's reason as soon as it aborts. */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * `p`, with a timer pending meanwhile when `needed` (Workers). A request that waits on bytes another
 * request reads has no I/O of its own pending, and workerd cancels such a request as hung; a pending
 * timer is I/O of its own. (Continuations of a promise another request resolves run in the waiting
 * request's own context.) Node needs none: it never cancels a waiting request.
 */
export function awake<T>(
  p: Promise<T>,
  needed: boolean | undefined,
  tick: () => void = () => {},
): Promise<T> {
  if (!needed) return p;
  const timer = setInterval(tick, 500);
  return p.finally(() => clearInterval(timer));
}
