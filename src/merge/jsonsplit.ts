/**
 * Streaming splitter for Kubernetes list bodies: `{…head…, "items": [ item, item, … ], …tail…}` (Tables:
 * `"rows"`). Bytes go in, in chunks split anywhere (inside strings, escapes, numbers, multi-byte UTF-8);
 * out come:
 *   - `head`: the top-level members before the array, parsed (kind, apiVersion, metadata,
 *     columnDefinitions: small);
 *   - `item`: the raw bytes of one array element, exactly as received, without surrounding whitespace;
 *   - `tail`: the top-level members after the array, parsed (`{}` when none).
 * `head` is emitted once, when the array opens (or at the end when the body has no such array); `tail` once,
 * at the end. `"items": null` is accepted as an empty array. Only one item (or one top-level member) is ever
 * buffered, so memory stays flat however long the list.
 *
 * The scanner is a full validating JSON pushdown automaton over bytes (RFC 8259 grammar: literals,
 * numbers, strings with escapes, control characters refused, nesting): malformed input raises a
 * {@link JsonSplitError}, never a hang nor an untyped exception. It does not validate UTF-8 sequences
 * (bytes ≥ 0x80 are never structural, so splitting is unaffected; decode items with a fatal TextDecoder if
 * that matters).
 *
 * Item bytes are a view (`subarray`) of the input chunk when the item lies within one chunk, a fresh copy
 * otherwise: the caller may keep them as long as the chunks it fed are not reused.
 */
import { concatBytes } from '../util/bytes.ts';

export type SplitEvent =
  | { type: 'head'; value: Record<string, unknown> }
  | {
      type: 'item';
      bytes: Uint8Array;
      index: number;
      /**
       * where the item's `metadata` object lies in `bytes` (from, to), when the item is an object whose
       * top-level keys are plain (no escapes, no duplicate metadata) and none of them refers to other
       * objects by name (involvedObject, regarding, related): the rewriting then never scans the rest
       */
      metadata?: readonly [number, number];
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
}

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
const S_START = 0;
const S_VALUE = 1; // a value must come
const S_AFTER = 2; // after a value: , or closer
const S_KEY_OR_END = 3; // after {
const S_KEY = 4; // after , in an object
const S_COLON = 5;
const S_ARR_FIRST = 6; // after [
const S_STR = 7;
const S_ESC = 8;
const S_HEX = 9;
const S_NUM_MINUS = 10;
const S_NUM_ZERO = 11;
const S_NUM_INT = 12;
const S_NUM_DOT = 13;
const S_NUM_FRAC = 14;
const S_NUM_E = 15;
const S_NUM_ESIGN = 16;
const S_NUM_EXP = 17;
const S_LIT = 18;
const S_DONE = 19;

const OBJ = 1;
const ARR = 2;

// what a capture belongs to
const CAP_NONE = 0;
const CAP_ITEM = 1;
const CAP_MEMBER = 2;

const LIT_TRUE = [0x74, 0x72, 0x75, 0x65];
const LIT_FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const LIT_NULL = [0x6e, 0x75, 0x6c, 0x6c];

const decoder = new TextDecoder();

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const METADATA = ascii('metadata');
const INVOLVED = ascii('involvedObject');
const REGARDING = ascii('regarding');
const RELATED = ascii('related');

function keyIs(chunk: Uint8Array, at: number, key: Uint8Array): boolean {
  for (let k = 0; k < key.length; k++) if (chunk[at + k] !== key[k]) return false;
  return true;
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/**
 * Incremental splitter. Feed chunks with {@link push}, then call {@link end}; events go to the callback
 * synchronously. After an error every further call throws the same error.
 */
export class ListSplitter {
  private readonly arrayKeys: ReadonlySet<string>;
  private readonly arrayKey: string;
  private readonly maxItemBytes: number;
  private readonly maxMemberBytes: number;
  private readonly maxDepth: number;

  private state = S_START;
  private stack = new Uint8Array(64);
  private depth = 0;
  private strIsKey = false;
  private hexLeft = 0;
  private lit: number[] = LIT_NULL;
  private litIdx = 0;

  /** depth of the target array while inside it, else -1 */
  private itemDepth = -1;
  /** values deeper than this concern nobody (an item's nested values): valueDone is not even called */
  private watchDepth = 1;
  private itemIndex = 0;
  private targetSeen = false;
  /** the key just read at depth 1 is the target */
  private keyIsTarget = false;

  private cap = CAP_NONE;
  private capStart = 0; // index in the current chunk
  private capParts: Uint8Array[] = [];
  private capPartsLen = 0;

  // where the current item's metadata lies (stream offsets); see SplitEvent
  private itemStart = 0;
  private mdFrom = -1;
  private mdTo = -1;
  /** the item's top-level keys allow a metadata range (see SplitEvent) */
  private plainItem = false;
  /** chunk index of the opening quote of the item's top-level key being read, -1 if none */
  private itemKeyAt = -1;
  /** the last top-level key of the item was `metadata`; its value is being read */
  private mdNext = false;
  private mdOpen = false;

  private headParts: string[] = [];
  private tailParts: string[] = [];
  private headEmitted = false;

  private base = 0; // stream offset of the current chunk
  private failed: JsonSplitError | undefined;

  constructor(opts: SplitterOptions = {}) {
    const keys = typeof opts.arrayKey === 'string' ? [opts.arrayKey] : (opts.arrayKey ?? ['items']);
    this.arrayKeys = new Set(keys);
    this.arrayKey = keys.join('|');
    this.maxItemBytes = opts.maxItemBytes ?? 64 * 1024 * 1024;
    this.maxMemberBytes = opts.maxMemberBytes ?? 16 * 1024 * 1024;
    this.maxDepth = opts.maxDepth ?? 1000;
  }

  /** True once the top-level object has closed. */
  get done(): boolean {
    return this.state === S_DONE;
  }

  push(chunk: Uint8Array, emit: (e: SplitEvent) => void): void {
    if (this.failed) throw this.failed;
    try {
      this.scan(chunk, emit);
    } catch (e) {
      if (e instanceof JsonSplitError) this.failed = e;
      throw e;
    }
  }

  /** Signals the end of input; throws a {@link JsonSplitError} if the body is incomplete. */
  end(): void {
    if (this.failed) throw this.failed;
    if (this.state !== S_DONE) {
      this.failed = new JsonSplitError('unexpected end of JSON input', this.base);
      throw this.failed;
    }
  }

  private fail(msg: string, i: number): never {
    throw new JsonSplitError(msg, this.base + i);
  }

  private startCapture(kind: number, i: number): void {
    this.cap = kind;
    this.capStart = i;
    this.capParts.length = 0;
    this.capPartsLen = 0;
  }

  /** bytes of the capture from its start to `end` (exclusive) in `chunk` */
  private captured(chunk: Uint8Array, end: number): Uint8Array {
    if (this.capPartsLen === 0) return chunk.subarray(this.capStart, end);
    const last = chunk.subarray(this.capStart, end);
    this.capParts.push(last);
    const out = concatBytes(this.capParts, this.capPartsLen + last.length);
    this.capParts.pop();
    return out;
  }

  private emitHead(emit: (e: SplitEvent) => void): void {
    this.headEmitted = true;
    emit({ type: 'head', value: JSON.parse(`{${this.headParts.join(',')}}`) });
    this.headParts = [];
  }

  /** A value has just completed; `end` is its exclusive end in `chunk`. */
  private valueDone(chunk: Uint8Array, end: number, emit: (e: SplitEvent) => void): void {
    const d = this.depth;
    if (d === this.itemDepth && this.cap === CAP_ITEM) {
      const bytes = this.captured(chunk, end);
      if (bytes.length > this.maxItemBytes) this.fail(`item larger than ${this.maxItemBytes} bytes`, end);
      this.cap = CAP_NONE;
      if (this.plainItem && this.mdTo > 0)
        emit({ type: 'item', bytes, index: this.itemIndex++, metadata: [this.mdFrom, this.mdTo] });
      else emit({ type: 'item', bytes, index: this.itemIndex++ });
    } else if (d === this.itemDepth + 1 && this.mdOpen) {
      this.mdOpen = false;
      this.mdTo = this.base + end - this.itemStart;
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
  private valueStart(c: number, i: number, emit: (e: SplitEvent) => void): void {
    const d = this.depth;
    if (d === this.itemDepth) {
      this.startCapture(CAP_ITEM, i);
      this.itemStart = this.base + i;
      this.mdFrom = -1;
      this.mdTo = -1;
      this.plainItem = c === 0x7b;
      this.mdNext = false;
      this.mdOpen = false;
    } else if (this.mdNext && d === this.itemDepth + 1) {
      this.mdNext = false;
      if (c === 0x7b) {
        this.mdOpen = true;
        this.mdFrom = this.base + i - this.itemStart;
      } else this.plainItem = false;
    } else if (d === 1 && this.keyIsTarget) {
      this.keyIsTarget = false;
      this.cap = CAP_NONE; // the target member is neither head nor tail
      this.capParts.length = 0;
      this.capPartsLen = 0;
      if (this.targetSeen) this.fail(`duplicate key "${this.arrayKey}"`, i);
      this.targetSeen = true;
      if (c === 0x5b) {
        this.emitHead(emit);
        this.itemDepth = 2;
        this.watchDepth = 3;
      } else if (c === 0x6e) {
        this.emitHead(emit); // `"items": null`: no items; the null itself is parsed as usual
      } else {
        this.fail(`expected an array or null for "${this.arrayKey}"`, i);
      }
    }
  }

  /** An item's top-level key ended just before `end` (its closing quote is at end − 1). */
  private itemKey(chunk: Uint8Array, end: number): void {
    const at = this.itemKeyAt;
    this.itemKeyAt = -1;
    if (at < 0) {
      this.plainItem = false;
      return;
    }
    const len = end - at - 2;
    if (len === 8 && keyIs(chunk, at + 1, METADATA)) {
      if (this.mdFrom >= 0) this.plainItem = false;
      else this.mdNext = true;
    } else if (
      (len === 14 && keyIs(chunk, at + 1, INVOLVED)) ||
      (len === 9 && keyIs(chunk, at + 1, REGARDING)) ||
      (len === 7 && keyIs(chunk, at + 1, RELATED))
    )
      this.plainItem = false;
  }

  private push1(kind: number, i: number): void {
    if (this.depth >= this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth}`, i);
    if (this.depth + 1 >= this.stack.length) {
      const s = new Uint8Array(this.stack.length * 2);
      s.set(this.stack);
      this.stack = s;
    }
    this.stack[++this.depth] = kind;
  }

  private scan(chunk: Uint8Array, emit: (e: SplitEvent) => void): void {
    const n = chunk.length;
    let i = 0;
    let state = this.state;
    while (i < n) {
      let c = chunk[i]!;
      switch (state) {
        case S_STR: {
          // fast path: plain string bytes
          while (c !== 0x22 && c !== 0x5c && c >= 0x20) {
            if (++i === n) break;
            c = chunk[i]!;
          }
          if (i === n) break;
          if (c === 0x22) {
            i++;
            if (this.strIsKey) {
              state = S_COLON;
              if (this.depth === this.itemDepth + 1 && this.plainItem) this.itemKey(chunk, i);
              else if (this.depth === 1 && this.cap === CAP_MEMBER) {
                const raw = this.captured(chunk, i);
                if (raw.length > this.maxMemberBytes) this.fail('key too long', i);
                this.keyIsTarget = this.arrayKeys.has(JSON.parse(decoder.decode(raw)));
              }
            } else {
              state = S_AFTER;
              if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
            }
          } else if (c === 0x5c) {
            state = S_ESC;
            if (this.strIsKey && this.depth === this.itemDepth + 1) this.plainItem = false;
            i++;
          } else {
            this.fail('control character in string', i);
          }
          break;
        }
        case S_AFTER: {
          if (isWs(c)) {
            i++;
            break;
          }
          const top = this.stack[this.depth];
          if (c === 0x2c) {
            state = top === OBJ ? S_KEY : S_VALUE;
            i++;
          } else if (c === 0x7d && top === OBJ) {
            i++;
            this.depth--;
            if (this.depth === 0) {
              state = S_DONE;
              this.finish(emit);
            } else {
              state = S_AFTER;
              if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
            }
          } else if (c === 0x5d && top === ARR) {
            i++;
            if (this.depth === this.itemDepth) {
              this.itemDepth = -1;
              this.watchDepth = 1;
            }
            this.depth--;
            state = S_AFTER;
            if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
          } else {
            this.fail(`unexpected ${describe(c)} after a value`, i);
          }
          break;
        }
        case S_VALUE:
        case S_ARR_FIRST: {
          if (isWs(c)) {
            i++;
            break;
          }
          if (c === 0x5d && state === S_ARR_FIRST) {
            i++;
            if (this.depth === this.itemDepth) {
              this.itemDepth = -1;
              this.watchDepth = 1;
            }
            this.depth--;
            state = S_AFTER;
            if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
            break;
          }
          if (this.depth <= this.watchDepth) this.valueStart(c, i, emit);
          i++;
          if (c === 0x22) {
            state = S_STR;
            this.strIsKey = false;
          } else if (c === 0x7b) {
            this.push1(OBJ, i - 1);
            state = S_KEY_OR_END;
          } else if (c === 0x5b) {
            this.push1(ARR, i - 1);
            state = S_ARR_FIRST;
          } else if (c === 0x2d) {
            state = S_NUM_MINUS;
          } else if (c === 0x30) {
            state = S_NUM_ZERO;
          } else if (c >= 0x31 && c <= 0x39) {
            state = S_NUM_INT;
          } else if (c === 0x74) {
            state = S_LIT;
            this.lit = LIT_TRUE;
            this.litIdx = 1;
          } else if (c === 0x66) {
            state = S_LIT;
            this.lit = LIT_FALSE;
            this.litIdx = 1;
          } else if (c === 0x6e) {
            state = S_LIT;
            this.lit = LIT_NULL;
            this.litIdx = 1;
          } else {
            this.fail(`unexpected ${describe(c)}, expected a value`, i - 1);
          }
          break;
        }
        case S_KEY_OR_END:
        case S_KEY: {
          if (isWs(c)) {
            i++;
            break;
          }
          if (c === 0x22) {
            if (this.depth === 1) {
              if (this.cap !== CAP_NONE) this.fail('internal: capture overlap', i);
              this.startCapture(CAP_MEMBER, i);
            } else if (this.depth === this.itemDepth + 1) this.itemKeyAt = i;
            this.strIsKey = true;
            state = S_STR;
            i++;
          } else if (c === 0x7d && state === S_KEY_OR_END) {
            i++;
            this.depth--;
            if (this.depth === 0) {
              state = S_DONE;
              this.finish(emit);
            } else {
              state = S_AFTER;
              if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
            }
          } else {
            this.fail(`unexpected ${describe(c)}, expected a string key`, i);
          }
          break;
        }
        case S_COLON: {
          if (isWs(c)) {
            i++;
          } else if (c === 0x3a) {
            state = S_VALUE;
            i++;
          } else {
            this.fail(`unexpected ${describe(c)}, expected ':'`, i);
          }
          break;
        }
        case S_ESC: {
          if (c === 0x75) {
            state = S_HEX;
            this.hexLeft = 4;
          } else if (
            c === 0x22 ||
            c === 0x5c ||
            c === 0x2f ||
            c === 0x62 ||
            c === 0x66 ||
            c === 0x6e ||
            c === 0x72 ||
            c === 0x74
          ) {
            state = S_STR;
          } else {
            this.fail('invalid escape in string', i);
          }
          i++;
          break;
        }
        case S_HEX: {
          if (!isHex(c)) this.fail('invalid \\u escape in string', i);
          i++;
          if (--this.hexLeft === 0) state = S_STR;
          break;
        }
        case S_NUM_MINUS: {
          if (c === 0x30) state = S_NUM_ZERO;
          else if (c >= 0x31 && c <= 0x39) state = S_NUM_INT;
          else this.fail('invalid number', i);
          i++;
          break;
        }
        case S_NUM_INT: {
          while (c >= 0x30 && c <= 0x39) {
            if (++i === n) break;
            c = chunk[i]!;
          }
          if (i === n) break;
          if (c === 0x2e) {
            state = S_NUM_DOT;
            i++;
          } else if (c === 0x65 || c === 0x45) {
            state = S_NUM_E;
            i++;
          } else {
            state = S_AFTER;
            if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
          }
          break;
        }
        case S_NUM_ZERO: {
          if (c === 0x2e) {
            state = S_NUM_DOT;
            i++;
          } else if (c === 0x65 || c === 0x45) {
            state = S_NUM_E;
            i++;
          } else {
            state = S_AFTER;
            if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
          }
          break;
        }
        case S_NUM_DOT: {
          if (c < 0x30 || c > 0x39) this.fail('invalid number', i);
          state = S_NUM_FRAC;
          i++;
          break;
        }
        case S_NUM_FRAC: {
          while (c >= 0x30 && c <= 0x39) {
            if (++i === n) break;
            c = chunk[i]!;
          }
          if (i === n) break;
          if (c === 0x65 || c === 0x45) {
            state = S_NUM_E;
            i++;
          } else {
            state = S_AFTER;
            if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
          }
          break;
        }
        case S_NUM_E: {
          if (c === 0x2b || c === 0x2d) state = S_NUM_ESIGN;
          else if (c >= 0x30 && c <= 0x39) state = S_NUM_EXP;
          else this.fail('invalid number', i);
          i++;
          break;
        }
        case S_NUM_ESIGN: {
          if (c < 0x30 || c > 0x39) this.fail('invalid number', i);
          state = S_NUM_EXP;
          i++;
          break;
        }
        case S_NUM_EXP: {
          while (c >= 0x30 && c <= 0x39) {
            if (++i === n) break;
            c = chunk[i]!;
          }
          if (i === n) break;
          state = S_AFTER;
          if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
          break;
        }
        case S_LIT: {
          if (c !== this.lit[this.litIdx]) this.fail('invalid literal', i);
          i++;
          if (++this.litIdx === this.lit.length) {
            state = S_AFTER;
            if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
          }
          break;
        }
        case S_START: {
          if (isWs(c)) {
            i++;
          } else if (c === 0x7b) {
            this.push1(OBJ, i);
            state = S_KEY_OR_END;
            i++;
          } else {
            this.fail(`unexpected ${describe(c)}, expected '{'`, i);
          }
          break;
        }
        case S_DONE: {
          if (!isWs(c)) this.fail(`unexpected ${describe(c)} after the end of the object`, i);
          i++;
          break;
        }
      }
    }
    this.state = state;
    // an item key that goes on in the next chunk cannot be compared in place: no metadata range then
    if (this.itemKeyAt >= 0 && state === S_STR && this.strIsKey) this.plainItem = false;
    this.itemKeyAt = -1;
    if (this.cap !== CAP_NONE) {
      // the capture continues in the next chunk: keep a copy of its part of this one
      const part = chunk.slice(this.capStart);
      if (part.length) {
        this.capParts.push(part);
        this.capPartsLen += part.length;
      }
      const limit = this.cap === CAP_ITEM ? this.maxItemBytes : this.maxMemberBytes;
      if (this.capPartsLen > limit) this.fail(`value larger than ${limit} bytes`, n);
      this.capStart = 0;
    }
    this.base += n;
  }

  private finish(emit: (e: SplitEvent) => void): void {
    if (!this.headEmitted) this.emitHead(emit);
    const tail = JSON.parse(`{${this.tailParts.join(',')}}`);
    this.tailParts = [];
    emit({ type: 'tail', value: tail });
  }
}

function describe(c: number): string {
  return c >= 0x20 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `byte 0x${c.toString(16).padStart(2, '0')}`;
}

/**
 * Splits a whole stream. Events come as they are found; the stream is read no faster than the consumer
 * takes events. Cancels the source when the consumer stops early or the body is malformed.
 */
export async function* splitListStream(
  body: ReadableStream<Uint8Array>,
  opts?: SplitterOptions,
): AsyncGenerator<SplitEvent, void, undefined> {
  const splitter = new ListSplitter(opts);
  const reader = body.getReader();
  const queue: SplitEvent[] = [];
  const push = (e: SplitEvent) => {
    queue.push(e);
  };
  let finished = false;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      splitter.push(r.value, push);
      for (let k = 0; k < queue.length; k++) yield queue[k]!;
      queue.length = 0;
    }
    splitter.end();
    finished = true;
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** The same as a WHATWG TransformStream: `body.pipeThrough(listSplitterTransform())`. */
export function listSplitterTransform(opts?: SplitterOptions): TransformStream<Uint8Array, SplitEvent> {
  const splitter = new ListSplitter(opts);
  return new TransformStream<Uint8Array, SplitEvent>({
    transform(chunk, controller) {
      splitter.push(chunk, (e) => controller.enqueue(e));
    },
    flush() {
      splitter.end();
    },
  });
}

/** Convenience for one item: its bytes as a JS value. */
export function parseItem(bytes: Uint8Array): unknown {
  return JSON.parse(decoder.decode(bytes));
}
