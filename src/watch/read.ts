/**
 * One upstream watch body as events: newline-delimited JSON, one event a line (src/util/lines.ts splits
 * them). A line that is not a JSON watch event, or one longer than any object kube stores, breaks the
 * stream: the caller resumes it as if it had been cut, so an upstream that sends garbage is retried with
 * backoff, never believed.
 */

import { ItemScanner } from '../merge/jsonsplit/item.ts';
import { ValueMemo } from '../merge/jsonsplit/memo.ts';
import { concatBytes } from '../util/bytes.ts';
import { type ChunkReading, type ChunkSink, readChunks } from '../util/chunks.ts';
import { indexOfByte, LineTooLongError, NotJsonError, ndjson } from '../util/lines.ts';
import { scanWatchLine } from './bytes.ts';
import type { WatchEvent } from './merge.ts';

/** etcd refuses values over 1.5 MiB; a watch line of a Table or a managed-fields-heavy object stays well under */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/** the item scanner's native comparison, for the platform to give (jsonsplit-memo.ts; lists use it too) */
export { useNativeEquality } from '../merge/jsonsplit/memo.ts';

/**
 * One value memo for every watch stream of the process (or isolate): events of any stream repeat what
 * others held (the same containers, the same status), and one memo bounds what they keep together to its
 * 1 MiB, where one per stream would let ten thousand busy watches keep up to a MiB each. Made at the first
 * event, after the platform gave its native comparison.
 */
let sharedMemo: ValueMemo | undefined;
function watchMemo(): ValueMemo {
  sharedMemo ??= new ValueMemo();
  return sharedMemo;
}

/**
 * One item scanner for every watch stream of the process (or isolate), as the memo: a scan is synchronous
 * and its facts are made anew each scan (held by the event, read during onEvent only), so its stacks are
 * scratch. One per reader (~4 KiB, six typed arrays) was made at a stream's first event and kept for its
 * life: 3,000 upstream readers of 1,000 busy merged watches kept 12 MiB and 18,000 array buffers the
 * collector walks, promoted while events flowed (bench merged-watch: the major GCs of its timed phase).
 */
let sharedScanner: ItemScanner | undefined;
function watchScanner(): ItemScanner {
  sharedScanner ??= new ItemScanner(undefined, watchMemo());
  return sharedScanner;
}

export class WatchStreamError extends Error {
  override name = 'WatchStreamError';
}

function isEvent(v: unknown): v is WatchEvent {
  return (
    !!v &&
    typeof v === 'object' &&
    typeof (v as WatchEvent).type === 'string' &&
    !!(v as WatchEvent).object &&
    typeof (v as WatchEvent).object === 'object'
  );
}

/** Reads newline-delimited JSON watch events from a body; cancels the body when the reader stops. */
export async function* watchEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<WatchEvent> {
  const reader = body.pipeThrough(ndjson<unknown>({ maxLineBytes: MAX_EVENT_BYTES })).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (!isEvent(value))
        throw new WatchStreamError(`not a watch event: ${JSON.stringify(value)?.slice(0, 80)}`);
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** Who a {@link WatchEventReader} hands its events and its end to. */
export interface WatchEventSink {
  /** false: stop reading (the body is cancelled) */
  onEvent(ev: WatchEvent): boolean;
  /** the body ended or was cancelled (`err` undefined), broke, or sent what is not a watch event */
  onEnd(err: unknown): void;
}

/**
 * One upstream watch body read event by event, synchronously per chunk, with no stream layer of its own:
 * what an idle watch holds is this object, its reading and the incomplete line (none until a chunk ends
 * mid-line). Every event before a break or garbage is handed over first.
 *
 * Events are scanned, not parsed (src/watch/bytes.ts): the sink gets a RawWatchEvent, whose bytes
 * are a view of the chunk and whose `object` is parsed when read, so a sink reads either during onEvent
 * only. A line the scanner does not read is parsed, and reported as before when it is no watch event.
 */
export class WatchEventReader implements ChunkSink {
  /** the incomplete line so far, as the chunks it came in (joined once, when its newline arrives) */
  private pending: Uint8Array[] | undefined;
  private pendingBytes = 0;
  private stopped = false;
  private finished = false;
  private reading: ChunkReading | undefined;
  private paused = false;

  constructor(private readonly to: WatchEventSink) {}

  read(body: ReadableStream<Uint8Array>): void {
    const reading = readChunks(body, this);
    // chunks already in may have stopped it before the reading was known: end the body now
    if (this.stopped) reading.cancel();
    else if (!this.finished) {
      this.reading = reading;
      if (this.paused) reading.pause?.();
    }
  }

  /** hold the upstream back (the merged watch's client is behind) */
  pause(): void {
    this.paused = true;
    this.reading?.pause?.();
  }

  resume(): void {
    this.paused = false;
    this.reading?.resume?.();
  }

  /** stop reading and end the upstream request (the sink's onEnd follows) */
  cancel(): void {
    this.stopped = true;
    this.pending = undefined;
    this.reading?.cancel();
  }

  chunk(chunk: Uint8Array): void {
    if (this.stopped) return;
    let from = 0;
    for (
      let nl = indexOfByte(chunk, 0x0a, 0);
      nl >= 0 && !this.stopped;
      nl = indexOfByte(chunk, 0x0a, from)
    ) {
      const pending = this.pending;
      if (this.pendingBytes + nl - from > MAX_EVENT_BYTES) throw tooLong();
      if (!pending) this.line(chunk, from, nl);
      else {
        pending.push(chunk.subarray(from, nl));
        const whole = concatBytes(pending, this.pendingBytes + nl - from);
        this.pending = undefined;
        this.pendingBytes = 0;
        this.line(whole, 0, whole.length);
      }
      from = nl + 1;
    }
    if (from < chunk.length && !this.stopped) {
      this.pendingBytes += chunk.length - from;
      if (this.pendingBytes > MAX_EVENT_BYTES) throw tooLong();
      // the caller may reuse its buffer once this returns: keep a copy
      const rest = chunk.slice(from);
      if (this.pending) this.pending.push(rest);
      else this.pending = [rest];
    }
  }

  end(): void {
    const pending = this.pending;
    this.pending = undefined;
    try {
      if (!this.stopped && pending) this.line(concatBytes(pending, this.pendingBytes), 0, this.pendingBytes);
    } catch (err) {
      this.finish(err);
      return;
    }
    this.finish(undefined);
  }

  fail(err: unknown): void {
    this.pending = undefined;
    this.finish(err);
  }

  private finish(err: unknown): void {
    if (this.finished) return;
    this.finished = true;
    this.reading = undefined;
    this.to.onEnd(err);
  }

  /**
   * The line `bytes[from..to)` (its newline excluded): read where it lies, the chunk's bytes scanned in
   * place (a view per line, and the scanner's WebAssembly lane copying each line in anew, cost more)
   */
  private line(bytes: Uint8Array, from: number, to: number): void {
    let end = to;
    if (end > from && bytes[end - 1] === 0x0d) end--;
    // read from its bytes (the merger rewrites what it can without parsing), else parsed as before
    const raw = scanWatchLine(bytes, watchScanner(), from, end);
    if (raw) {
      if (!this.to.onEvent(raw)) this.cancel();
      return;
    }
    const text = dec.decode(bytes.subarray(from, end));
    if (text.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new NotJsonError(`not a JSON line: ${JSON.stringify(text.slice(0, 80))}`);
    }
    if (!isEvent(v)) throw new WatchStreamError(`not a watch event: ${JSON.stringify(v)?.slice(0, 80)}`);
    if (!this.to.onEvent(v)) this.cancel();
  }
}

const dec = new TextDecoder();
const tooLong = () => new LineTooLongError(`line longer than ${MAX_EVENT_BYTES} bytes`);

/**
 * Reads a watch body event by event into `onEvent` (a {@link WatchEventReader}); `onEvent` returning false
 * stops reading and cancels the body. Resolves at the body's end; rejects (as `watchEvents` throws) on a
 * break or on a line that is not a watch event, after every event before it was handed over.
 */
export function readWatchEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (ev: WatchEvent) => boolean,
): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    new WatchEventReader({ onEvent, onEnd: (err) => (err === undefined ? resolve() : reject(err)) }).read(
      body,
    ),
  );
}
