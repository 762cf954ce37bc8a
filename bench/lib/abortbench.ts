/**
 * What hearing a request's abort costs per upstream call (not a test): a merged list's calls over `n`
 * clusters, each listening until its answer ends, as before (a signal derived with AbortSignal.any per
 * 8 calls, src/upstreams/client.ts callSignal, and a listener of its own on it) against one listener on
 * the request's signal for all of them (src/util/abort-hub.ts), paired, the order swapped every round.
 *   node --import tsx bench/lib/abortbench.ts [n=1000] [rounds=15]
 */

import { CALLS_PER_SIGNAL, callSignal } from '../../src/upstreams/client.ts';
import { hearAbort, unhearAbort } from '../../src/util/abort-hub.ts';

const n = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 15);

/** µs per call: n calls listening at once, then each taken back (their answers ended) */
function derived(): number {
  const t0 = performance.now();
  const ac = new AbortController();
  const held: Array<[AbortSignal, () => void]> = [];
  for (let i = 0; i < n; i++) {
    const s = callSignal(ac.signal)!;
    const f = () => {};
    s.addEventListener('abort', f, { once: true });
    held.push([s, f]);
  }
  for (const [s, f] of held) s.removeEventListener('abort', f);
  return ((performance.now() - t0) * 1000) / n;
}

function hub(): number {
  const t0 = performance.now();
  const ac = new AbortController();
  const held: Array<() => void> = [];
  for (let i = 0; i < n; i++) {
    const f = () => {};
    hearAbort(ac.signal, f);
    held.push(f);
  }
  for (const f of held) unhearAbort(ac.signal, f);
  return ((performance.now() - t0) * 1000) / n;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
for (let w = 0; w < 5; w++) {
  derived();
  hub();
}
const a: number[] = [];
const b: number[] = [];
for (let r = 0; r < rounds; r++) {
  if (r % 2) {
    a.push(hub());
    b.push(derived());
  } else {
    b.push(derived());
    a.push(hub());
  }
}
console.log(
  `${n} calls, ${rounds} rounds (AbortSignal.any per ${CALLS_PER_SIGNAL} calls): derived signal + own listener ${median(b).toFixed(2)} µs a call, one listener (abort-hub) ${median(a).toFixed(2)} µs; ratio ${median(b.map((x, i) => x / a[i]!)).toFixed(2)}x`,
);
