/**
 * The WebAssembly (SIMD) lane of skipValue (./skip.wat, the same answers as ../skip.ts): the seam that
 * chooses it. The platform gives the compiled module once at startup (src/platform/node.ts compiles the
 * committed skip.wasm, src/worker.ts passes the module wrangler bundled); none given, or refused when
 * instantiated: the JavaScript lane. One instance per module and isolate: making one costs ~110 µs (its
 * memory's address space), more than a list of ten clusters' scanning gains from it. Scans are
 * synchronous and its memory holds only the copy of the array last scanned, copied again whenever another
 * array comes (lane's `loaded`), so scanners of different requests share nothing they could see.
 */
import { SKIP_STACK, skipValue } from '../skip.ts';

/** where the chunk's copy begins in the instance's memory (below: its container-kind stack) */
const DATA = 256;
const PAGE = 65536;

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
  private view: Uint8Array;
  private loaded: Uint8Array | undefined;
  /** bytes copied in so far (the bench compares them with the bytes scanned) */
  copied = 0;
  /** the JavaScript lane's stack, for an array the memory cannot grow to hold */
  private readonly stack = new Uint8Array(SKIP_STACK);

  constructor(module: WebAssembly.Module) {
    const exports = new WebAssembly.Instance(module, {}).exports;
    this.memory = exports.memory as WebAssembly.Memory;
    this.run = exports.skip as (i: number, n: number, room: number) => number;
    this.view = new Uint8Array(this.memory.buffer);
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
    const need = DATA + b.length + 16;
    if (this.view.length < need) {
      try {
        this.memory.grow(Math.ceil((need - this.view.length) / PAGE));
      } catch {
        return false;
      }
      this.view = new Uint8Array(this.memory.buffer);
    }
    this.view.set(b, DATA);
    this.loaded = b;
    this.copied += b.length;
    return true;
  }
}

/** the instance of the module last asked for (undefined: it was refused) */
let shared: { module: WebAssembly.Module; lane: WasmSkip | undefined } | undefined;

/**
 * The skipValue an item scanner calls: the wasm lane when a module is given (by default the platform's)
 * and it instantiates (a runtime may refuse), else the JavaScript lane on `stack` (SKIP_STACK long).
 */
export function skipLane(stack: Uint8Array, module = platformModule): Skip {
  if (module !== undefined) {
    if (shared?.module !== module) {
      let lane: WasmSkip | undefined;
      try {
        lane = new WasmSkip(module);
      } catch {
        // refused (no SIMD, no memory): the JavaScript lane below
      }
      shared = { module, lane };
    }
    if (shared.lane) return shared.lane.skip;
  }
  return (b, i, n, room) => skipValue(b, i, n, room, stack);
}

/** is `skip` the wasm lane (the tests': did the runtime take the module)? */
export function isWasmLane(skip: Skip): boolean {
  return skip === shared?.lane?.skip;
}

/** the shared instance of the platform's module, if made (the bench reads its `copied`) */
export function sharedWasmSkip(): WasmSkip | undefined {
  return shared?.lane;
}
