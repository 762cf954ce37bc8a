/**
 * What a merged list pays per upstream call before anything is sent (not a test), `n` calls at once, the
 * old way against the new, paired, the order swapped every round:
 *   - hearing the request's abort: a signal derived with AbortSignal.any per 8 calls
 *     (src/upstreams/client.ts callSignal) and a listener of its own on it, against one listener on the
 *     request's signal for all of them (src/util/abort-hub.ts);
 *   - the headers sent: the shared request headers read as entries (headerPairs) and the call's own
 *     built as an undici Headers and iterated by the Node transport, against the same as entry lists
 *     (src/upstreams/pair-headers.ts, what the list route and the client hand on now).
 *   node --import tsx bench/lib/callbench.ts [n=1000] [rounds=15]
 */
import { headerPairs, headersOf } from '../../src/request/headers.ts';
import {
  CALLS_PER_SIGNAL,
  callSignal,
  forwardableRequestHeaders,
  useLazyHeaders,
} from '../../src/upstreams/client.ts';
import { PairHeaders } from '../../src/upstreams/pair-headers.ts';
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

/** a merged list's shared request headers, as the list route makes them */
const asked = new Headers({
  accept: 'application/json',
  'user-agent': 'kubectl/v1.30.0 (linux/amd64) kubernetes/7c4f1f9',
  'accept-encoding': 'gzip',
  authorization: 'Bearer abc',
  connection: 'keep-alive',
});
asked.set('Accept-Encoding', 'identity');
// as the Node platform installs it (src/platform/node.ts)
useLazyHeaders((p) => new PairHeaders(p, true) as unknown as Headers);
const askedEntries = forwardableRequestHeaders(asked);

/** µs per call: the shared headers read, the call's own made with its credential and iterated */
function headers(shared: Headers, own: (p: string[]) => Headers): number {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const p = [...headerPairs(shared)];
    p.push('authorization', `Bearer token-${i & 7}`);
    own(p).forEach(() => {});
  }
  return ((performance.now() - t0) * 1000) / n;
}
const headersBefore = () => headers(asked, headersOf);
const headersNow = () => headers(askedEntries, (p) => new PairHeaders(p, true) as unknown as Headers);

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
function paired(before: () => number, now: () => number): { b: number; a: number; r: number } {
  for (let w = 0; w < 5; w++) {
    before();
    now();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2) {
      a.push(now());
      b.push(before());
    } else {
      b.push(before());
      a.push(now());
    }
  }
  return { b: median(b), a: median(a), r: median(b.map((x, i) => x / a[i]!)) };
}
const ab = paired(derived, hub);
const hd = paired(headersBefore, headersNow);
console.log(
  `${n} calls, ${rounds} rounds, µs a call (medians; ratio: per round)\n` +
    `  abort: derived signal (AbortSignal.any per ${CALLS_PER_SIGNAL}) + own listener ${ab.b.toFixed(2)}, one listener (abort-hub) ${ab.a.toFixed(2)}; ${ab.r.toFixed(2)}x\n` +
    `  headers: undici Headers read and built ${hd.b.toFixed(2)}, entry lists ${hd.a.toFixed(2)}; ${hd.r.toFixed(2)}x`,
);
