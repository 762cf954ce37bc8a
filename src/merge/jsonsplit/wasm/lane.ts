/**
 * The WebAssembly (SIMD) lane of skipValue (./skip.wat, the same answers as ../skip.ts): the seam that
 * chooses it. The platform gives the compiled module once at startup (src/platform/node.ts compiles the
 * committed skip.wasm, src/worker.ts passes the module wrangler bundled); none given, or refused when
 * instantiated: the JavaScript lane. One instance per module and isolate: making one costs ~110 µs (its
 * memory's address space), more than a list of ten clusters' scanning gains from it. Scans are
 * synchronous and its memory holds only the copy of the array last scanned, copied again whenever another
 * array comes (lane's `loaded`), so scanners of different requests share nothing they could see.
 */
import { DESCENDS, KEYS } from '../facts.ts';
import { SKIP_STACK, skipValue } from '../skip.ts';

/** where the chunk's copy begins in the instance's memory (below: its container-kind stack, the key table) */
const DATA = 4096;
const PAGE = 65536;
/** the tape's header (its count, the entry read per depth) before its entries (skip.wat's tape) */
const TAPE_HEAD = 1024;
/** i32 fields of a tape entry: key start, key length, value start, value end, the entry after its own */
export const TAPE_ENTRY = 5;
/** entries a tape holds: more (an object of thousands of labels) and the JavaScript scanner reads the item */
const TAPE_CAP = 4096;
/** tape's answer when the item has more entries than the tape holds, or the memory cannot hold its array */
export const TAPE_FULL = -3;

/** the platform's module: configuration, not state (each scanner made from now on takes it) */
let platformModule: WebAssembly.Module | undefined;

/** the compiled skip.wasm for scanners made from now on; undefined: the JavaScript lane */
export function useWasmScanner(m: WebAssembly.Module | undefined): void {
  platformModule = m;
}

export function wasmScannerModule(): WebAssembly.Module | undefined {
  return platformModule;
}

/** skipValue(b, i, n, room) of one scanner: the wasm lane, or the JavaScript one with its own stack */
export type Skip = (b: Uint8Array, i: number, n: number, room: number) => number;

/**
 * One instance of skip.wasm. The bytes a call reads are copied into its memory once per array (a
 * chunk, an item kept across chunks, a watch line): calls for the same array (the same object) read the
 * copy, so an array's bytes must not change while it is the one scanned (chunks fed are never reused).
 */
export class WasmSkip {
  private readonly memory: WebAssembly.Memory;
  private readonly run: (i: number, n: number, room: number) => number;
  private readonly runTape:
    | ((i: number, n: number, room: number, at: number, cap: number) => number)
    | undefined;
  private view: Uint8Array;
  /** the memory as i32 (the tape's entries) */
  words: Int32Array;
  /** where the tape of the array loaded lies (bytes), after its copy */
  private tapeAt = 0;
  /** the index in `words` of the last tape's first entry */
  tapeBase = 0;
  private loaded: Uint8Array | undefined;
  /** bytes copied in so far (the bench compares them with the bytes scanned) */
  copied = 0;
  /** the JavaScript lane's stack, for an array the memory cannot grow to hold */
  private readonly stack = new Uint8Array(SKIP_STACK);

  constructor(module: WebAssembly.Module) {
    const exports = new WebAssembly.Instance(module, {}).exports;
    this.memory = exports.memory as WebAssembly.Memory;
    this.run = exports.skip as (i: number, n: number, room: number) => number;
    this.runTape = exports.tape as typeof this.runTape;
    this.view = new Uint8Array(this.memory.buffer);
    this.words = new Int32Array(this.memory.buffer);
    if (this.runTape) writeKeyTable(this.view);
  }

  /** does the module write tapes (skip.wat's tape; a module from before it does not) */
  get hasTape(): boolean {
    return this.runTape !== undefined;
  }

  /**
   * skipValue of the value at `i`, and the tape of where the members the item scanner looks into lie
   * (skip.wat's tape: from `words[tapeBase]` on, TAPE_ENTRY i32 each, entry 0 the value itself); TAPE_FULL
   * when the tape cannot hold them.
   */
  tape(b: Uint8Array, i: number, n: number, room: number): number {
    if ((b !== this.loaded && !this.load(b)) || this.runTape === undefined) return TAPE_FULL;
    return this.runTape(i, n, room, this.tapeAt, TAPE_CAP);
  }

  readonly skip: Skip = (b, i, n, room) => {
    if (b !== this.loaded && !this.load(b)) return skipValue(b, i, n, room, this.stack);
    return this.run(i, n, room);
  };

  /** the next call copies again (its array's bytes changed) */
  forget(): void {
    this.loaded = undefined;
  }

  /** false: the memory could not grow to hold `b` (the runtime's limit), which the caller scans in JavaScript */
  private load(b: Uint8Array): boolean {
    const tapeAt = (DATA + b.length + 16 + 7) & ~7;
    const need = tapeAt + TAPE_HEAD + TAPE_CAP * TAPE_ENTRY * 4;
    if (this.view.length < need) {
      try {
        this.memory.grow(Math.ceil((need - this.view.length) / PAGE));
      } catch {
        return false;
      }
      this.view = new Uint8Array(this.memory.buffer);
      this.words = new Int32Array(this.memory.buffer);
    }
    this.tapeAt = tapeAt;
    this.tapeBase = (tapeAt + TAPE_HEAD) >> 2;
    this.view.set(b, DATA);
    this.loaded = b;
    this.copied += b.length;
    return true;
  }
}

/**
 * The keys the item scanner knows (../facts.ts KEYS, shortest first), where skip.wat's keyId reads them:
 * at 256 + 4 len the first record of that length and how many (u16 each), record r at 512 + 64 r (the key,
 * zero-padded), at 3584 + its id whether the tape looks into its value.
 */
function writeKeyTable(mem: Uint8Array): void {
  if (KEYS.length > 47) throw new Error('the key table holds 47 keys');
  const dir = new DataView(mem.buffer, 256, 256);
  for (const [r, key] of KEYS.entries()) {
    if (key.length > 63) throw new Error('the key table holds keys of 63 bytes at most');
    if (dir.getUint16(4 * key.length + 2, true) === 0) dir.setUint16(4 * key.length, r, true);
    dir.setUint16(4 * key.length + 2, dir.getUint16(4 * key.length + 2, true) + 1, true);
    mem.set(key, 512 + 64 * r);
  }
  for (const [id, d] of DESCENDS.entries()) mem[3584 + id] = d ? 1 : 0;
}

/** the instance of the module last asked for (undefined: it was refused) */
let shared: { module: WebAssembly.Module; lane: WasmSkip | undefined } | undefined;

/**
 * The skipValue an item scanner calls: the wasm lane when a module is given (by default the platform's)
 * and it instantiates (a runtime may refuse), else the JavaScript lane on `stack` (SKIP_STACK long).
 */
export function skipLane(stack: Uint8Array, module = platformModule): Skip {
  const lane = wasmLane(module);
  if (lane) return lane.skip;
  return (b, i, n, room) => skipValue(b, i, n, room, stack);
}

/** the shared instance of `module` (made the first time), undefined when none given or refused */
export function wasmLane(module = platformModule): WasmSkip | undefined {
  if (module === undefined) return undefined;
  if (shared?.module !== module) {
    let lane: WasmSkip | undefined;
    try {
      lane = new WasmSkip(module);
    } catch {
      // refused (no SIMD, no memory): the JavaScript lane
    }
    shared = { module, lane };
  }
  return shared.lane;
}

/** is `skip` the wasm lane (the tests': did the runtime take the module)? */
export function isWasmLane(skip: Skip): boolean {
  return skip === shared?.lane?.skip;
}

/** the shared instance of the platform's module, if made (the bench reads its `copied`) */
export function sharedWasmSkip(): WasmSkip | undefined {
  return shared?.lane;
}
