/**
 * One cluster's list body read for the merge: split into its head, items and tail (src/merge/jsonsplit/index.ts)
 * straight from the body's reader, under the body-idle timeout, in one async generator.
 * A route helper (docs/architecture.md): imports no route.
 *
 * Per cluster and request this is what a merged list pays before its first item, so it stays lean: no
 * Web stream of its own between the body and the splitter (a ReadableStream costs ≈ 20 µs to make on
 * Node 20, and one more promise per chunk), one idle timer per body re-armed only when it fires early.
 *
 * The body is read to its end once the list's tail is in (the merge stops asking at the tail): an answer
 * whose last bytes (a chunked body's final chunk) are not read yet would otherwise be cancelled, which on
 * Node destroys the request (an error built with its stack) and its keep-alive connection with it.
 */
import { type ItemScanner, ListSplitter, type SplitEvent } from '../merge/jsonsplit/index.ts';
import { concatBytes } from '../util/bytes.ts';
import { answerReader, type PullReader, pullReader } from '../util/pulled.ts';

/** An upstream body that sent nothing for longer than the body-idle timeout. */
export class BodyIdleError extends Error {
  constructor(readonly idleMs: number) {
    super(`its body sent nothing for ${idleMs / 1000}s`);
    this.name = 'BodyIdleError';
  }
}

const LIST_ARRAYS = { arrayKey: ['items', 'rows'] };

/** Bytes of a body's first chunk split at a time until its head is in (a Table's columns: a few KiB). */
const HEAD_SLICE = 4096;

/** A list body being split: its events, and how many bytes came so far (0: the body never began). */
export interface GuardedSplit {
  events: SplitEvents;
  received(): number;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });
const NONE: SplitEvent[] = [];

/**
 * A body's split events, handed on chunk by chunk: {@link ready} takes the next event of a chunk already
 * split without a promise (the merge's path, item after item), `next` waits for the next chunk when none
 * is left. An async generator handing on each event cost a promise and a resumption per item and hop
 * (≈ 0.6 µs each, a Table row's bytes are ≈ 860). Closing it (`return`) closes the body's reading.
 */
export class SplitEvents implements AsyncIterableIterator<SplitEvent, undefined> {
  private batch = NONE;
  private at = 0;

  constructor(private readonly batches: AsyncGenerator<SplitEvent[], void, undefined>) {}

  /** the next event already split, or undefined: ask `next` */
  ready(): SplitEvent | undefined {
    return this.at < this.batch.length ? this.batch[this.at++] : undefined;
  }

  async next(): Promise<IteratorResult<SplitEvent, undefined>> {
    for (;;) {
      if (this.at < this.batch.length) return { done: false, value: this.batch[this.at++]! };
      const r = await this.batches.next();
      this.at = 0;
      if (r.done) {
        this.batch = NONE;
        return DONE;
      }
      this.batch = r.value;
    }
  }

  async return(_value?: undefined): Promise<IteratorResult<SplitEvent, undefined>> {
    this.batch = NONE;
    await this.batches.return(undefined);
    return DONE;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * The events of a list (or Table) body (or an answer's), failing with a {@link BodyIdleError} (and cancelling the body) when
 * one read waits longer than `idleMs`. Only a waiting read counts: a consumer that reads slowly (the merge
 * writing to a slow client) never trips it. Cancels the body when the consumer stops before its end or it
 * is malformed; a body without bytes (or none at all) fails as a truncated list.
 */
export function splitGuarded(
  body: Response | ReadableStream<Uint8Array> | null,
  idleMs: number,
  scanner?: ItemScanner,
): GuardedSplit {
  const counted = { bytes: 0 };
  return { events: new SplitEvents(split(body, idleMs, counted, scanner)), received: () => counted.bytes };
}

async function* split(
  body: Response | ReadableStream<Uint8Array> | null,
  idleMs: number,
  counted: { bytes: number },
  scanner: ItemScanner | undefined,
): AsyncGenerator<SplitEvent[], void, undefined> {
  // one merged list's bodies share one item scanner (`scanner`): its stacks are made once, not per cluster,
  // and its value memo learns from every cluster (10 pods a cluster, each with a memo of its own, scanned
  // 3.7 µs an item slower than 1,000 a cluster: bench/lib/scale-prof.ts, 10x1000 against 1000x10)
  const splitter = new ListSplitter(scanner ? { ...LIST_ARRAYS, scanner } : LIST_ARRAYS);
  // an answer is read as the runtime reads it best (on Node: without making its Web body)
  const reader = body === null ? null : body instanceof Response ? answerReader(body) : pullReader(body);
  if (!reader) {
    splitter.end();
    return;
  }
  const guard = new IdleRead(reader, idleMs);
  // each chunk's events go on as one batch (the array is the consumer's then)
  let queue: SplitEvent[] = [];
  const push = (e: SplitEvent) => {
    queue.push(e);
  };
  let finished = false;
  let headless = true;
  // what is left of the chunk the head came in: split when the merge asks for this body's items
  let rest: Uint8Array | undefined;
  try {
    for (;;) {
      let chunk: Uint8Array;
      if (rest) {
        chunk = rest;
        rest = undefined;
      } else {
        const r = await guard.read();
        if (r.done) break;
        counted.bytes += r.value.length;
        // a plain view: a Node Buffer's subarray costs more
        chunk =
          r.value.constructor === Uint8Array
            ? r.value
            : new Uint8Array(r.value.buffer, r.value.byteOffset, r.value.length);
      }
      if (headless) {
        // only as far as the head: every cluster's head is read before the merged body starts, and the
        // items of a chunk split then would wait (and be kept through collections) until the merge
        // reaches that cluster; split now, they would also delay the first byte by a chunk per cluster
        let at = 0;
        while (at < chunk.length && queue.length === 0) {
          const end = Math.min(chunk.length, at + HEAD_SLICE);
          splitter.push(chunk.subarray(at, end), push);
          at = end;
        }
        if (queue.length > 0) {
          headless = false;
          if (at < chunk.length) rest = chunk.subarray(at);
        }
      } else splitter.push(chunk, push);
      if (queue.length === 0) continue;
      const batch = queue;
      queue = [];
      const t = batch.findIndex((e) => e.type === 'tail');
      if (t < 0) {
        yield batch;
        continue;
      }
      // the items before the tail go on first; the body is read to its end before the tail is handed on
      if (t > 0) yield batch.slice(0, t);
      finished = await guard.drain(splitter, rest);
      yield t > 0 ? batch.slice(t) : batch;
      // the list is whole: nothing after its tail is an event (a body that broke after it is cancelled)
      return;
    }
    splitter.end();
    finished = true;
  } finally {
    guard.stop();
    if (!finished) await guard.reader.cancel().catch(() => {});
    guard.reader.releaseLock();
  }
}

/**
 * A whole body (a discovery document) as text, read under the same guard: fails with a
 * {@link BodyIdleError} (the body cancelled) when one read waits longer than `idleMs`, so a member that goes
 * silent mid-body fails alone instead of holding the whole answer until the client gives up.
 */
export async function textGuarded(body: ReadableStream<Uint8Array> | null, idleMs: number): Promise<string> {
  if (!body) return '';
  const guard = new IdleRead(pullReader(body), idleMs);
  const parts: Uint8Array[] = [];
  try {
    for (;;) {
      const r = await guard.read();
      if (r.done) break;
      parts.push(r.value);
    }
  } catch (err) {
    await guard.reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    guard.stop();
    guard.reader.releaseLock();
  }
  // as Response#text(): UTF-8, a BOM dropped, bad bytes as U+FFFD
  return new TextDecoder().decode(concatBytes(parts));
}

/**
 * Reads of one body, each timed by one timer re-armed only when it fires before the read waited long
 * (measured: a timer per read cost ≈ 12 µs per chunk). The one idle guard of upstream bodies read whole
 * (lists, discovery documents); watches have their own heartbeat.
 */
class IdleRead {
  private waitingSince = 0; // when the pending read began; 0: none pending
  private timer: ReturnType<typeof setTimeout> | undefined;
  private failed: BodyIdleError | undefined;

  constructor(
    readonly reader: PullReader,
    private readonly idleMs: number,
  ) {}

  private readonly check = () => {
    this.timer = undefined;
    if (!this.waitingSince) return;
    const left = this.waitingSince + this.idleMs - Date.now();
    if (left > 0) {
      this.timer = setTimeout(this.check, left);
      return;
    }
    this.failed = new BodyIdleError(this.idleMs);
    // a stalled upstream is dropped at once: its connection must not stay open behind us (the pending
    // read then ends, and read() throws)
    this.reader.cancel(this.failed).catch(() => {});
  };

  async read(): Promise<ReadableStreamReadResult<Uint8Array>> {
    if (this.failed) throw this.failed;
    this.waitingSince = Date.now();
    this.timer ??= setTimeout(this.check, this.idleMs);
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await this.reader.read();
    } finally {
      this.waitingSince = 0;
    }
    if (this.failed) throw this.failed;
    return r;
  }

  /**
   * After the list's tail: the body's last bytes read to its end (whitespace at most; anything after the
   * list is ignored, as it was before the tail was known to be the end). True when the body ended.
   */
  async drain(splitter: ListSplitter, rest: Uint8Array | undefined): Promise<boolean> {
    try {
      if (rest) splitter.push(rest, () => {});
      for (;;) {
        const r = await this.read();
        if (r.done) break;
        splitter.push(r.value, () => {});
      }
      splitter.end();
    } catch {
      // the list is whole; what broke after it is the upstream's business, and the body is cancelled
      return false;
    }
    return true;
  }

  stop(): void {
    this.waitingSince = 0;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
