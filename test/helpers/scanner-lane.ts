// Every test file scans as the Node server does (src/platform/node.ts): the item scanner's WebAssembly lane
// (src/merge/jsonsplit/wasm/lane.ts) on; `FLEET_SCANNER_WASM=off npx vitest run …` runs the JavaScript one.
import { readFileSync } from 'node:fs';
import { useWasmScanner } from '../../src/merge/jsonsplit/wasm/lane.ts';

if (process.env.FLEET_SCANNER_WASM !== 'off')
  useWasmScanner(
    new WebAssembly.Module(
      new Uint8Array(readFileSync(new URL('../../src/merge/jsonsplit/wasm/skip.wasm', import.meta.url))),
    ),
  );
