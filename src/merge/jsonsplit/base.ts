/**
 * The list splitter's vocabulary and state (src/merge/jsonsplit/index.ts has the byte scanner and the stream
 * wrappers): its events and options, the automaton's states, and the splitter's fields and small steps.
 * Split out so the scanner's file stays readable; nothing here is used on its own.
 */
import { concatBytes } from '../../util/bytes.ts';
import { ITEM, type ItemFacts, ItemScanner, ROW, SCAN_MORE } from './item.ts';

export type SplitEvent =
  | { type: 'head'; value: Record<string, unknown> }
  | {
      type: 'item';
      bytes: Uint8Array;
      index: number;
      /**
       * where the values the fleet view changes lie in `bytes` (jsonsplit-item.ts), when the item is an
       * object; `facts.odd` when the byte-level rewriting must not rely on them
       */
      facts?: ItemFacts;
    }
  | { type: 'tail'; value: Record<string, unknown> };

export interface SplitterOptions {
  /**
   * The top-level array to split: `items` (lists, default) or `rows` (Tables). Several keys may be given
   * when the caller cannot know the body's kind beforehand (the first one present is split).
   */
  arrayKey?: string | readonly string[];
  /** Refuse an item larger than this many bytes (default 64 MiB). */
  maxItemBytes?: number;
  /** Refuse a top-level member (outside the array) larger than this (default 16 MiB). */
  maxMemberBytes?: number;
  /** Refuse nesting deeper than this (default 1000). */
  maxDepth?: number;
  /**
   * The item scanner to use instead of one of its own: the splitters of one merged list share one, so a
   * cluster's few items find the values the clusters before it taught the memo (src/list/read.ts).
   */
  scanner?: ItemScanner;
}

/** joins larger than this get a buffer of their own (the scratch stays small) */
const SCRATCH_MAX = 256 * 1024;

/** Malformed or over-limit input. `offset` is the byte offset in the whole stream. */
export class JsonSplitError extends Error {
  override readonly name = 'JsonSplitError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at byte ${offset}`);
  }
}

// states
export const S_START = 0;
export const S_VALUE = 1; // a value must come
export const S_AFTER = 2; // after a value: , or closer
export const S_KEY_OR_END = 3; // after {
export const S_KEY = 4; // after , in an object
export const S_COLON = 5;
export const S_ARR_FIRST = 6; // after [
export const S_STR = 7;
export const S_ESC = 8;
export const S_HEX = 9;
export const S_NUM_MINUS = 10;
export const S_NUM_ZERO = 11;
export const S_NUM_INT = 12;
export const S_NUM_DOT = 13;
export const S_NUM_FRAC = 14;
export const S_NUM_E = 15;
export const S_NUM_ESIGN = 16;
export const S_NUM_EXP = 17;
export const S_LIT = 18;
export const S_DONE = 19;

export const OBJ = 1;
export const ARR = 2;

// what a capture belongs to
export const CAP_NONE = 0;
export const CAP_ITEM = 1;
export const CAP_MEMBER = 2;

export const LIT_TRUE = [0x74, 0x72, 0x75, 0x65];
export const LIT_FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
export const LIT_NULL = [0x6e, 0x75, 0x6c, 0x6c];

export const decoder = new TextDecoder();

export function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
export function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Fields and small steps of the splitter; the scanner itself is ListSplitter.scan. */
export abstract class SplitterBase {
  protected readonly arrayKeys: ReadonlySet<string>;
  protected readonly arrayKey: string;
  protected readonly maxItemBytes: number;
  protected readonly maxMemberBytes: number;
  protected readonly maxDepth: number;

  protected state = S_START;
  protected stack = new Uint8Array(64);
  protected depth = 0;
  protected strIsKey = false;
  protected hexLeft = 0;
  protected lit: number[] = LIT_NULL;
  protected litIdx = 0;

  /** depth of the target array while inside it, else -1 */
  protected itemDepth = -1;
  /** values deeper than this concern nobody (an item's nested values): valueDone is not even called */
  protected watchDepth = 1;
  protected itemIndex = 0;
  protected targetSeen = false;
  /** the key just read at depth 1 is the target */
  protected keyIsTarget = false;

  protected cap = CAP_NONE;
  protected capStart = 0; // index in the current chunk
  protected capParts: Uint8Array[] = [];
  protected capPartsLen = 0;

  /** the target array is a Table's rows */
  protected rows = false;
  /** the start of an item the last chunk ended in (the automaton's state is at that item's start) */
  protected pending: Uint8Array | undefined;
  /** how often the current item was kept so */
  protected pends = 0;
  /** the size of the last item emitted (the window an item cut by a chunk boundary is first tried in) */
  private lastItemBytes = 0;
  /** the key just read at depth 1 */
  protected lastKey = '';

  protected headParts: string[] = [];
  protected tailParts: string[] = [];
  protected headEmitted = false;

  protected base = 0; // stream offset of the current chunk
  protected failed: JsonSplitError | undefined;

  /** the item scanner of this body's items (its memo learns the body's repeated values) */
  protected readonly scanner: ItemScanner;
  /** where an item cut by a chunk boundary is joined to be scanned */
  private scratch = new Uint8Array(0);

  constructor(opts: SplitterOptions = {}) {
    const keys = typeof opts.arrayKey === 'string' ? [opts.arrayKey] : (opts.arrayKey ?? ['items']);
    this.arrayKeys = new Set(keys);
    this.arrayKey = keys.join('|');
    this.maxItemBytes = opts.maxItemBytes ?? 64 * 1024 * 1024;
    this.maxMemberBytes = opts.maxMemberBytes ?? 16 * 1024 * 1024;
    this.maxDepth = opts.maxDepth ?? 1000;
    this.scanner = opts.scanner ?? new ItemScanner();
  }

  /** True once the top-level object has closed. */
  get done(): boolean {
    return this.state === S_DONE;
  }

  push(chunk: Uint8Array, emit: (e: SplitEvent) => void): void {
    if (this.failed) throw this.failed;
    // a Node Buffer's own methods (subarray) cost more than a plain view's (1.7×, bench/lib/idiombench.ts):
    // the scan sees plain views
    if (chunk.constructor !== Uint8Array)
      chunk = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length);
    let from = 0;
    if (this.pending) {
      const kept = this.pending;
      this.pending = undefined;
      from = this.resume(kept, chunk, emit);
      if (from < 0) {
        // the item goes on past the part tried: its start, then this whole chunk, scanned as one
        const joined = new Uint8Array(kept.length + chunk.length);
        joined.set(kept);
        joined.set(chunk, kept.length);
        this.base -= kept.length;
        chunk = joined;
        from = 0;
      }
    }
    try {
      this.scan(chunk, emit, from);
    } catch (e) {
      if (e instanceof JsonSplitError) this.failed = e;
      throw e;
    }
  }

  /**
   * An item began in the last chunk (`kept`, its start): it is scanned whole with as much of `chunk` as
   * it needs (a few windows, not the whole chunk copied), and emitted; where the scan goes on in `chunk`,
   * or -1 when the item does not end in the windows tried (the caller joins the whole chunk).
   */
  private resume(kept: Uint8Array, chunk: Uint8Array, emit: (e: SplitEvent) => void): number {
    // a window about the size of the items before (a list's items are alike), not a fixed 16 KiB: at every
    // chunk boundary (a socket read, ~64 KiB) the window is copied twice (here, into the wasm lane)
    let take = Math.min(chunk.length, Math.max(4096, 2 * kept.length, this.lastItemBytes + 512));
    for (;;) {
      // the windows are tried in one scratch buffer, the item copied out of it alone: a window is mostly
      // bytes after the item, and a buffer each (a chunk boundary each) fed the collector as much as a
      // quarter of the body in bytes
      const size = kept.length + take;
      const own = size > SCRATCH_MAX;
      if (!own && this.scratch.length < size) this.scratch = new Uint8Array(Math.min(SCRATCH_MAX, 2 * size));
      const joined = own ? new Uint8Array(size) : this.scratch.subarray(0, size);
      joined.set(kept);
      joined.set(chunk.subarray(0, take), kept.length);
      const end = this.scanner.scan(joined, 0, joined.length, this.rows ? ROW : ITEM, this.itemLimit());
      if (end > 0 && end <= this.maxItemBytes) {
        // the item's own bytes: nothing may see the scratch buffer written over by the next join
        this.emitItem(emit, own ? joined.subarray(0, end) : joined.slice(0, end), this.scanner.facts);
        this.pends = 0;
        this.state = S_AFTER;
        return end - kept.length;
      }
      if (end !== SCAN_MORE || take === chunk.length || joined.length > this.maxItemBytes) break;
      take = Math.min(chunk.length, take * 4);
    }
    return -1;
  }

  /** Signals the end of input; throws a {@link JsonSplitError} if the body is incomplete. */
  end(): void {
    if (this.failed) throw this.failed;
    if (this.state !== S_DONE) {
      this.failed = new JsonSplitError('unexpected end of JSON input', this.base);
      throw this.failed;
    }
  }

  protected fail(msg: string, i: number): never {
    throw new JsonSplitError(msg, this.base + i);
  }

  protected startCapture(kind: number, i: number): void {
    this.cap = kind;
    this.capStart = i;
    this.capParts.length = 0;
    this.capPartsLen = 0;
  }

  /** bytes of the capture from its start to `end` (exclusive) in `chunk` */
  protected captured(chunk: Uint8Array, end: number): Uint8Array {
    if (this.capPartsLen === 0) return chunk.subarray(this.capStart, end);
    const last = chunk.subarray(this.capStart, end);
    this.capParts.push(last);
    const out = concatBytes(this.capParts, this.capPartsLen + last.length);
    this.capParts.pop();
    return out;
  }

  protected emitHead(emit: (e: SplitEvent) => void): void {
    this.headEmitted = true;
    emit({ type: 'head', value: JSON.parse(`{${this.headParts.join(',')}}`) });
    this.headParts = [];
  }

  /** A value has just completed; `end` is its exclusive end in `chunk`. */
  protected valueDone(chunk: Uint8Array, end: number, emit: (e: SplitEvent) => void): void {
    const d = this.depth;
    if (d === this.itemDepth && this.cap === CAP_ITEM) {
      const bytes = this.captured(chunk, end);
      if (bytes.length > this.maxItemBytes) this.fail(`item larger than ${this.maxItemBytes} bytes`, end);
      this.cap = CAP_NONE;
      // an item that went on over chunks: scanned again whole, for its facts
      const whole =
        bytes[0] === 0x7b &&
        this.scanner.scan(bytes, 0, bytes.length, this.rows ? ROW : ITEM, this.itemLimit()) === bytes.length;
      this.emitItem(emit, bytes, whole ? this.scanner.facts : undefined);
    } else if (d === 1) {
      if (this.cap === CAP_MEMBER) {
        const bytes = this.captured(chunk, end);
        this.cap = CAP_NONE;
        if (bytes.length > this.maxMemberBytes)
          this.fail(`member larger than ${this.maxMemberBytes} bytes`, end);
        (this.targetSeen ? this.tailParts : this.headParts).push(decoder.decode(bytes));
      }
    }
  }

  /** A value starts at `i` with byte `c` (state was S_VALUE or S_ARR_FIRST). */
  protected valueStart(c: number, i: number, emit: (e: SplitEvent) => void): void {
    const d = this.depth;
    if (d === this.itemDepth) {
      this.startCapture(CAP_ITEM, i);
    } else if (d === 1 && this.keyIsTarget) {
      this.keyIsTarget = false;
      this.cap = CAP_NONE; // the target member is neither head nor tail
      this.capParts.length = 0;
      this.capPartsLen = 0;
      if (this.targetSeen) this.fail(`duplicate key "${this.arrayKey}"`, i);
      this.targetSeen = true;
      if (c === 0x5b) {
        this.emitHead(emit);
        this.rows = this.lastKey === 'rows';
        this.itemDepth = 2;
        this.watchDepth = 3;
      } else if (c === 0x6e) {
        this.emitHead(emit); // `"items": null`: no items; the null itself is parsed as usual
      } else {
        this.fail(`expected an array or null for "${this.arrayKey}"`, i);
      }
    }
  }

  /** nesting the item scanner may accept inside an item (deeper: the automaton, which knows maxDepth) */
  protected itemLimit(): number {
    return Math.min(100, this.maxDepth - this.itemDepth);
  }

  protected emitItem(emit: (e: SplitEvent) => void, bytes: Uint8Array, facts: ItemFacts | undefined): void {
    const index = this.itemIndex++;
    this.lastItemBytes = bytes.length;
    emit(facts ? { type: 'item', bytes, index, facts } : { type: 'item', bytes, index });
  }

  protected push1(kind: number, i: number): void {
    if (this.depth >= this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth}`, i);
    if (this.depth + 1 >= this.stack.length) {
      const s = new Uint8Array(this.stack.length * 2);
      s.set(this.stack);
      this.stack = s;
    }
    this.stack[++this.depth] = kind;
  }

  protected abstract scan(chunk: Uint8Array, emit: (e: SplitEvent) => void, from: number): void;

  protected finish(emit: (e: SplitEvent) => void): void {
    if (!this.headEmitted) this.emitHead(emit);
    const tail = JSON.parse(`{${this.tailParts.join(',')}}`);
    this.tailParts = [];
    emit({ type: 'tail', value: tail });
  }
}

export function describe(c: number): string {
  return c >= 0x20 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `byte 0x${c.toString(16).padStart(2, '0')}`;
}

/** Convenience for one item: its bytes as a JS value. */
export function parseItem(bytes: Uint8Array): unknown {
  return JSON.parse(decoder.decode(bytes));
}
