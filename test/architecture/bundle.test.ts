/**
 * The worker bundle's budget (≤ 1 MiB minified, issue 31: its cost is measured as workerd cold start by
 * bench/lib/worker-coldstart.ts, not counted in KiB) as a test, so a change that grows the
 * bundle past it fails here instead of only in `npm run bench -- --only=worker-bundle`: the same build
 * (scripts/build-worker.mjs WORKER_BUILD, minified as wrangler.toml asks) the bench measures.
 */
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { BUNDLE_GOAL_BYTES } from '../../bench/cases/bundle.ts';
import { WORKER_BUILD } from '../../scripts/build-worker.mjs';

describe('the worker bundle', () => {
  it(`stays within its ${BUNDLE_GOAL_BYTES / 1024} KiB budget, minified`, async () => {
    const r = await build({ ...WORKER_BUILD, minify: true, write: false });
    const bytes = r.outputFiles[0]!.contents.length;
    expect(bytes, `${(bytes / 1024).toFixed(1)} KiB`).toBeLessThanOrEqual(BUNDLE_GOAL_BYTES);
    // a bundle that lost its entry's code would pass the budget trivially
    expect(bytes).toBeGreaterThan(100 * 1024);
  }, 60_000);
});
