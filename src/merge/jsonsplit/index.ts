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
import {
  ARR,
  CAP_ITEM,
  CAP_MEMBER,
  CAP_NONE,
  decoder,
  describe,
  isHex,
  isWs,
  LIT_FALSE,
  LIT_NULL,
  LIT_TRUE,
  OBJ,
  S_AFTER,
  S_ARR_FIRST,
  S_COLON,
  S_DONE,
  S_ESC,
  S_HEX,
  S_KEY,
  S_KEY_OR_END,
  S_LIT,
  S_NUM_DOT,
  S_NUM_E,
  S_NUM_ESIGN,
  S_NUM_EXP,
  S_NUM_FRAC,
  S_NUM_INT,
  S_NUM_MINUS,
  S_NUM_ZERO,
  S_START,
  S_STR,
  S_VALUE,
  type SplitEvent,
  SplitterBase,
} from './base.ts';
import { ITEM, type ItemFacts, ItemScanner, ROW, SCAN_MORE } from './item.ts';

/** times an item may be kept for the next chunk before the automaton reads it (each keep scans it again) */
const MAX_PENDS = 2;

export { addAnnotations, stringAt } from './annotate.ts';
export { JsonSplitError, parseItem, type SplitEvent, type SplitterOptions } from './base.ts';
export { ItemScanner } from './item.ts';

/**
 * The facts of an item's bytes written anew (an item the fleet enriched), as the splitter finds them, so
 * the merge still rewrites it from its bytes instead of parsing it again; undefined when it cannot say.
 */
export function itemFacts(
  bytes: Uint8Array,
  rows: boolean,
  scanner = new ItemScanner(),
): ItemFacts | undefined {
  const whole =
    bytes[0] === 0x7b && scanner.scan(bytes, 0, bytes.length, rows ? ROW : ITEM, 100) === bytes.length;
  return whole ? scanner.facts : undefined;
}
/**
 * Incremental splitter. Feed chunks with {@link push}, then call {@link end}; events go to the callback
 * synchronously. After an error every further call throws the same error.
 */
export class ListSplitter extends SplitterBase {
  protected scan(chunk: Uint8Array, emit: (e: SplitEvent) => void, from: number): void {
    const n = chunk.length;
    let i = from;
    let state = this.state;
    scan: while (i < n) {
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
              if (this.depth === 1 && this.cap === CAP_MEMBER) {
                const raw = this.captured(chunk, i);
                if (raw.length > this.maxMemberBytes) this.fail('key too long', i);
                this.lastKey = JSON.parse(decoder.decode(raw));
                this.keyIsTarget = this.arrayKeys.has(this.lastKey);
              }
            } else {
              state = S_AFTER;
              if (this.depth <= this.watchDepth) this.valueDone(chunk, i, emit);
            }
          } else if (c === 0x5c) {
            state = S_ESC;
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
          if (c === 0x7b && this.depth === this.itemDepth) {
            // an item that lies in this chunk is scanned whole, at once (jsonsplit-item.ts)
            const end = this.scanner.scan(chunk, i, n, this.rows ? ROW : ITEM, this.itemLimit());
            if (end > 0 && end - i <= this.maxItemBytes) {
              this.emitItem(emit, chunk.subarray(i, end), this.scanner.facts);
              this.pends = 0;
              i = end;
              state = S_AFTER;
              break;
            }
            if (end === SCAN_MORE && this.pends < MAX_PENDS && n - i <= this.maxItemBytes) {
              // the item goes on in the next chunk: kept, and scanned whole once it is in (push)
              this.pending = chunk.slice(i);
              this.pends++;
              break scan;
            }
            this.pends = 0;
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
            }
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
}
