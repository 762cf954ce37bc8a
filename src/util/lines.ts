/**
 * Newline-delimited streams (watch events, `logs -f`, the relay's frame heads) as Web TransformStreams.
 *
 * Lines are split on the byte 0x0a before decoding: in UTF-8 that byte never occurs inside a multi-byte
 * character, so a chunk boundary anywhere (even mid-character) cannot corrupt a line. A trailing `\r` is
 * dropped (kube's framing is `\n`, but proxies in between may write `\r\n`); blank lines are skipped, as
 * client-go's decoder does.
 */
import { concatBytes } from './bytes.ts';

export interface LineOptions {
  /**
   * The longest line accepted, in bytes (without the newline). A longer one errors the stream instead of
   * buffering without bound: one upstream that never sends a newline must not hold the fleet's memory.
   */
  maxLineBytes?: number;
}

export class LineTooLongError extends Error {
  override name = 'LineTooLongError';
}

export type IndexOf = (this: Uint8Array, value: number, byteOffset: number) => number;
let nativeIndexOf: IndexOf = Uint8Array.prototype.indexOf as IndexOf;

/**
 * A faster byte search, given by the platform (src/platform/node.ts: Buffer#indexOf, memchr, which takes
 * any Uint8Array). V8's own TypedArray#indexOf goes a byte at a time, 10-50× slower on a line of a few
 * KiB (readers get plain views).
 */
export function useNativeIndexOf(indexOf: IndexOf): void {
  nativeIndexOf = indexOf;
}

/** where the first `byte` at or after `from` is in `b`, or -1 */
export function indexOfByte(b: Uint8Array, byte: number, from: number): number {
  return nativeIndexOf.call(b, byte, from);
}

/** whole lines only (never `stream: true`), so one decoder serves every splitter */
const dec = new TextDecoder();

/**
 * The splitter both streams (and src/watch's reader) share: `push` every chunk, `end` once;
 * `onLine` gets each non-blank line. Throws LineTooLongError past `maxLineBytes`.
 */
export function lineSplitter(opts: LineOptions, onLine: (line: string) => void) {
  const max = opts.maxLineBytes ?? Number.POSITIVE_INFINITY;
  // the incomplete line so far, as the chunks it came in (joined once, when its newline arrives)
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const emit = (bytes: Uint8Array) => {
    let end = bytes.length;
    if (end > 0 && bytes[end - 1] === 0x0d) end--;
    const text = dec.decode(bytes.subarray(0, end));
    if (text.trim() !== '') onLine(text);
  };
  const tooLong = () => new LineTooLongError(`line longer than ${max} bytes`);
  return {
    push(chunk: Uint8Array): void {
      let from = 0;
      for (let nl = indexOfByte(chunk, 0x0a, 0); nl >= 0; nl = indexOfByte(chunk, 0x0a, from)) {
        const piece = chunk.subarray(from, nl);
        if (pendingBytes + piece.length > max) throw tooLong();
        if (pending.length === 0) emit(piece);
        else {
          pending.push(piece);
          const whole = concatBytes(pending, pendingBytes + piece.length);
          pending = [];
          pendingBytes = 0;
          emit(whole);
        }
        from = nl + 1;
      }
      if (from < chunk.length) {
        const rest = chunk.subarray(from);
        pendingBytes += rest.length;
        if (pendingBytes > max) throw tooLong();
        // the caller may reuse its buffer once this returns: keep a copy
        pending.push(rest.slice());
      }
    },
    end(): void {
      if (pending.length === 0) return;
      const whole = concatBytes(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      emit(whole);
    },
  };
}

/** Bytes → one string per non-blank line; a last line without a newline is emitted at the end. */
export function lines(opts: LineOptions = {}): TransformStream<Uint8Array, string> {
  let split!: ReturnType<typeof lineSplitter>;
  return new TransformStream<Uint8Array, string>({
    start(out) {
      split = lineSplitter(opts, (line) => out.enqueue(line));
    },
    transform: (chunk) => split.push(chunk),
    flush: () => split.end(),
  });
}

export class NotJsonError extends Error {
  override name = 'NotJsonError';
}

/**
 * Bytes → one parsed value per line. A line that is not JSON errors the stream with a NotJsonError
 * (carrying at most 80 characters of it), so a caller can tell a broken upstream from a closed one.
 */
export function ndjson<T = unknown>(opts: LineOptions = {}): TransformStream<Uint8Array, T> {
  let split!: ReturnType<typeof lineSplitter>;
  return new TransformStream<Uint8Array, T>({
    start(out) {
      split = lineSplitter(opts, (line) => {
        let v: T;
        try {
          v = JSON.parse(line) as T;
        } catch {
          throw new NotJsonError(`not a JSON line: ${JSON.stringify(line.slice(0, 80))}`);
        }
        out.enqueue(v);
      });
    },
    transform: (chunk) => split.push(chunk),
    flush: () => split.end(),
  });
}

/**
 * Lines written in one tick, handed on at its end: a burst of events costs one socket write and one HTTP
 * chunk per tick, not one per line. Pieces that lie back to back in one buffer (the merged watch writes
 * its lines so) are handed on as one view, without a copy; a run of them that fills a buffer is handed on
 * as it is (copying a burst's 64 KiB to join it to the next buffer's lines cost more than a second chunk),
 * and only the small rest (lines encoded one by one) is copied together. `flush` hands on what is pending
 * at once (before a close).
 */
export class TickBatch {
  private parts: Uint8Array[] | undefined;
  private bytes = 0;

  /** `whole`, if given, is offered each tick's pieces first (true: it took them, e.g. as one HTTP chunk) */
  constructor(
    private readonly out: (chunk: Uint8Array) => void,
    private readonly whole?: (parts: Uint8Array[], bytes: number) => boolean,
  ) {}

  add(piece: Uint8Array): void {
    if (!this.parts) {
      this.parts = [];
      queueMicrotask(() => this.flush());
    }
    this.parts.push(piece);
    this.bytes += piece.length;
  }

  flush(): void {
    const parts = this.parts;
    if (!parts) return;
    const bytes = this.bytes;
    this.parts = undefined;
    this.bytes = 0;
    if (this.whole?.(parts, bytes)) return;
    if (parts.length === 1) this.out(parts[0]!);
    else for (const chunk of joinRuns(parts)) this.out(chunk);
  }
}

/** a run of pieces this long goes on as a view of its own (a shorter one is copied with its neighbours) */
const RUN_ALONE = 8 * 1024;

/**
 * `parts` as few arrays as copying nothing big allows: each run of pieces back to back
 * in one buffer as a view, runs under RUN_ALONE bytes copied together with their short neighbours.
 */
export function joinRuns(parts: readonly Uint8Array[]): Uint8Array[] {
  const first = parts[0]!;
  if (parts.length === 1) return [first];
  const out: Uint8Array[] = [];
  // the pending short pieces (copied together), and the run being read
  let short: Uint8Array[] = [];
  let shortBytes = 0;
  let from = 0;
  let runBytes = first.length;
  const endRun = (to: number) => {
    const a = parts[from]!;
    if (runBytes >= RUN_ALONE) {
      if (short.length) out.push(joinBytes(short, shortBytes));
      short = [];
      shortBytes = 0;
      out.push(to - from === 1 ? a : new Uint8Array(a.buffer, a.byteOffset, runBytes));
    } else {
      for (let k = from; k < to; k++) short.push(parts[k]!);
      shortBytes += runBytes;
    }
  };
  for (let k = 1; k < parts.length; k++) {
    const p = parts[k]!;
    const a = parts[from]!;
    if (p.buffer === a.buffer && p.byteOffset === a.byteOffset + runBytes) {
      runBytes += p.length;
      continue;
    }
    endRun(k);
    from = k;
    runBytes = p.length;
  }
  endRun(parts.length);
  if (short.length) out.push(joinBytes(short, shortBytes));
  return out;
}

/** `parts` (`n` bytes in all) as one array: a view when they lie back to back in one buffer, else a copy */
export function joinBytes(parts: readonly Uint8Array[], n: number): Uint8Array {
  const first = parts[0]!;
  let end = first.byteOffset + first.length;
  for (let k = 1; k < parts.length; k++) {
    const p = parts[k]!;
    if (p.buffer !== first.buffer || p.byteOffset !== end) return concatBytes(parts, n);
    end += p.length;
  }
  return parts.length === 1 ? first : new Uint8Array(first.buffer, first.byteOffset, n);
}
