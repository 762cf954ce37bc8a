/** Every benchmark case, in the order they run. Add new ones here (see ./types.ts). */
import { authnCase } from './authn.ts';
import { bundleCase } from './bundle.ts';
import { cannedListCase, scaleCurveCase } from './canned-list.ts';
import { execCase } from './exec.ts';
import { informerStartCase } from './informer-start.ts';
import { mergedListCase, mergedListMemoryCase } from './merged-list.ts';
import { mergedWatchCase } from './merged-watch.ts';
import { mergedWatchManyCase } from './merged-watch-many.ts';
import { configmapCase, podListCase } from './passthrough.ts';
import { realListCase, realPassthroughCase, realWatchCase } from './real.ts';
import type { BenchCase } from './types.ts';

export const CASES: BenchCase[] = [
  configmapCase,
  podListCase,
  authnCase,
  mergedListCase,
  mergedListMemoryCase,
  cannedListCase,
  scaleCurveCase,
  mergedWatchCase,
  mergedWatchManyCase,
  execCase,
  bundleCase,
  informerStartCase,
  realListCase,
  realPassthroughCase,
  realWatchCase,
];

export function findCase(name: string): BenchCase | undefined {
  return CASES.find((c) => c.name === name);
}

/**
 * `--only` selection: comma-separated names or prefixes (`passthrough` selects both passthrough cases); a
 * full name selects that case only (`merged-list` is not also `merged-list-memory`). Without `--only`, the
 * cases that need the real bed run only with `--real` (`--only=real` selects them all).
 */
export function selectCases(only: string[] | undefined, real = false): BenchCase[] {
  if (!only?.length) return CASES.filter((c) => real || !c.needsBed);
  const names = new Set(CASES.map((c) => c.name));
  return CASES.filter((c) => only.some((o) => c.name === o || (!names.has(o) && c.name.startsWith(o))));
}
