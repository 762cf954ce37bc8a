/**
 * The Node side of the scanner's WebAssembly lane: nodeScannerWasm compiles the committed skip.wasm (beside
 * its text source under tsx, beside the bundle once built), FLEET_SCANNER_WASM=off gives none, and the
 * bundle build puts the binary where the bundle looks for it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildNode } from '../../scripts/build-node.mjs';
import { nodeScannerWasm } from './node.ts';

describe('nodeScannerWasm', () => {
  it('compiles skip.wasm, exporting the scanner, its tape and its memory', () => {
    const m = nodeScannerWasm(undefined);
    expect(m).toBeInstanceOf(WebAssembly.Module);
    expect(
      WebAssembly.Module.exports(m!)
        .map((e) => e.name)
        .sort(),
    ).toEqual(['memory', 'skip', 'tape']);
  });

  it('gives none when FLEET_SCANNER_WASM is off', () => {
    expect(nodeScannerWasm('off')).toBeUndefined();
  });

  it('is found beside the Node bundle', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-bundle-'));
    try {
      const main = await buildNode(join(dir, 'main.js'), { logLevel: 'error' });
      expect(existsSync(join(dir, 'skip.wasm'))).toBe(true);
      expect(readFileSync(join(dir, 'skip.wasm'))).toEqual(
        readFileSync(new URL('../merge/jsonsplit/wasm/skip.wasm', import.meta.url)),
      );
      // the bundle looks beside itself first
      expect(readFileSync(main, 'utf8')).toContain('"./skip.wasm"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
