/**
 * The memory settings of a fleet server process (deploy/node/memory.ts): what a starter gives a process
 * (environment and node options) and the V8 flags the process sets on itself, each left out when the
 * operator chose otherwise or turned the tuning off.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_FLAGS, engineFlags, memorySettings } from '../../deploy/node/memory.ts';
import { bundleNodeEntry, startNodeEntry } from '../helpers/nodeproc.ts';

describe('memory settings', () => {
  it('gives a process the arena cap and the semi-space cap unless already set', () => {
    expect(memorySettings({}, [])).toEqual({
      env: { MALLOC_ARENA_MAX: '2' },
      execArgv: ['--max-semi-space-size=4'],
    });
    expect(memorySettings({ MALLOC_ARENA_MAX: '4', NODE_OPTIONS: '--max-semi-space-size=8' }, [])).toEqual({
      env: {},
      execArgv: [],
    });
    expect(memorySettings({ FLEET_MEMORY_TUNING: 'off' }, [])).toEqual({ env: {}, execArgv: [] });
  });

  it('keeps WebAssembly (undici’s HTTP parser) in V8’s baseline tier unless told otherwise', () => {
    expect(ENGINE_FLAGS).toEqual(['--liftoff-only']);
    expect(engineFlags({}, [])).toEqual(['--liftoff-only']);
    expect(engineFlags({ FLEET_MEMORY_TUNING: 'on' }, ['--max-semi-space-size=4'])).toEqual([
      '--liftoff-only',
    ]);
    expect(engineFlags({ FLEET_MEMORY_TUNING: 'off' }, [])).toEqual([]);
    // the operator's own tiering choice stands
    for (const own of ['--no-liftoff-only', '--liftoff', '--wasm-tier-up', '--no-wasm-dynamic-tiering'])
      expect(engineFlags({}, [own])).toEqual([]);
    expect(() => engineFlags({ FLEET_MEMORY_TUNING: 'maybe' }, [])).toThrow(/FLEET_MEMORY_TUNING/);
  });

  it('compiles the fleet’s own scanner by the optimising tier, what compiles later by the baseline one', () => {
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--trace-wasm-compilation-times', 'test/fixtures/engine/tiers.ts'],
      { encoding: 'utf8', timeout: 60_000, env: { ...process.env, FLEET_MEMORY_TUNING: 'on' } },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^flags: --liftoff-only$/m);
    expect(run.stdout).toMatch(/^later: 7$/m);
    // "Compiled function 0x…#3 using TurboFan, took …": the compilers per module (tsx's own wasm among them)
    const tiers = new Map<string, string[]>();
    for (const [, mod, tier] of run.stdout.matchAll(/^Compiled function (0x[0-9a-f]+)#\d+ using (\w+)/gm))
      tiers.set(mod!, [...(tiers.get(mod!) ?? []), tier!]);
    const all = [...tiers.values()];
    // skip.wasm: every function (more than 5) by TurboFan, at once
    expect(all.some((t) => t.length > 5 && t.every((x) => x === 'TurboFan'))).toBe(true);
    // the module compiled after the settings: its one function by Liftoff
    expect(all.some((t) => t.length === 1 && t[0] === 'Liftoff')).toBe(true);
  });

  it('in a cluster: each worker compiles the scanner by the optimising tier, the primary (which never scans) does not', async () => {
    mkdirSync('.cache', { recursive: true });
    const main = await bundleNodeEntry('memory-settings');
    try {
      // the bundled entry, as `npm start` runs it, with the demo fleet; the workers inherit the trace flag
      const m = startNodeEntry(main, ['--workers', '2'], { FLEET_MEMORY_TUNING: 'on' }, [
        '--trace-wasm-compilation-times',
      ]);
      try {
        await m.waitFor(/2 worker processes \(pids .*\) share the port/, 90_000);
        // the primary's last start-up line, then an answer from a worker (its SIGTERM handler is set before
        // any start-up line: deploy/node/main.ts)
        const url = (await m.waitFor(/kubeconfig --server (\S+)/))[1]!;
        expect((await fetch(`${url}/version`)).status).toBe(200);
      } finally {
        m.p.kill('SIGTERM');
      }
      expect(await m.exited, m.output()).toBe(0);
      // "Compiled function 0x…#3 using TurboFan": the three processes share the output, so count the
      // functions compiled by TurboFan against the scanner's own (each index once per compiling process)
      const turbo = [...m.output().matchAll(/^Compiled function 0x[0-9a-f]+#(\d+) using TurboFan/gm)];
      const functions = new Set(turbo.map((t) => t[1])).size;
      expect(functions, m.output()).toBeGreaterThan(5);
      expect(turbo.length, m.output()).toBe(2 * functions);
    } finally {
      rmSync(resolve(main, '..'), { recursive: true, force: true });
    }
  });
});
