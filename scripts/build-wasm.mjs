// Assembles the WebAssembly text sources (src/merge/jsonsplit/wasm/*.wat) into the .wasm next to each,
// which is committed: neither runtime assembles anything (Workers refuse compiling bytes at run time; the
// worker bundle imports the .wasm as a module). src/merge/jsonsplit/wasm/skip-wasm.test.ts fails when a
// committed binary is not what its text assembles to. `node scripts/build-wasm.mjs` after editing a .wat.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import wabt from 'wabt';

export const WASM_DIR = fileURLToPath(new URL('../src/merge/jsonsplit/wasm/', import.meta.url));

/** the binary of one .wat file's text (SIMD on), deterministic: no names section, no debug info */
export async function assemble(name, text) {
  const w = await wabt();
  const mod = w.parseWat(name, text, { simd: true });
  try {
    mod.validate();
    return Uint8Array.from(mod.toBinary({ log: false, write_debug_names: false }).buffer);
  } finally {
    mod.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of readdirSync(WASM_DIR).filter((f) => f.endsWith('.wat'))) {
    const bin = await assemble(f, readFileSync(WASM_DIR + f, 'utf8'));
    const out = WASM_DIR + f.replace(/\.wat$/, '.wasm');
    writeFileSync(out, bin);
    console.log(`${out}: ${bin.length} bytes`);
  }
}
