/**
 * For property tests of the byte-level rewriting against parse-rewrite-serialise: JSON written as other
 * encoders may write it, and the building blocks of Kubernetes-shaped random objects.
 */
import fc from 'fast-check';

/** a small seeded PRNG, so a property's loose encoding replays with its counterexample */
export const seeded = (seed: number) => {
  let x = seed >>> 0 || 1;
  return () => {
    x = (x * 1103515245 + 12345) >>> 0;
    return x / 2 ** 32;
  };
};

export interface LooseOptions {
  /** how often a key is written with \u escapes (an escaped key sends the rewriting down its parsing path) */
  keyEscapes?: number;
  /** how often an object gives one of its keys twice (JSON.parse keeps the last value) */
  duplicateKeys?: number;
}

/**
 * JSON text of `v` as other encoders may write it: whitespace anywhere between tokens, characters of
 * strings written as \u escapes, keys in the value's own order (the arbitraries shuffle them), and with
 * `duplicateKeys` now and then a key given twice.
 */
export function looseJson(v: unknown, rnd: () => number, opts: LooseOptions = {}): string {
  const keyEscapes = opts.keyEscapes ?? 0.03;
  const ws = () => [' ', '\n', '\t', '\r\n  ', '', '', '', '', '', ''][Math.floor(rnd() * 10)]!;
  const str = (s: string, p: number) =>
    rnd() >= p
      ? JSON.stringify(s)
      : `"${[...s]
          .map((ch) =>
            rnd() < 0.4
              ? [...ch].map((_, k) => `\\u${ch.charCodeAt(k).toString(16).padStart(4, '0')}`).join('')
              : JSON.stringify(ch).slice(1, -1),
          )
          .join('')}"`;
  if (v === null || typeof v !== 'object') return typeof v === 'string' ? str(v, 0.3) : JSON.stringify(v);
  if (Array.isArray(v))
    return `[${ws()}${v.map((x) => looseJson(x, rnd, opts)).join(`${ws()},${ws()}`)}${ws()}]`;
  const members = Object.entries(v)
    .filter(([, x]) => x !== undefined)
    .map(([k, x]) => `${str(k, keyEscapes)}${ws()}:${ws()}${looseJson(x, rnd, opts)}`);
  if (members.length && rnd() < (opts.duplicateKeys ?? 0))
    members.push(members[Math.floor(rnd() * members.length)]!);
  return `{${ws()}${members.join(`,${ws()}`)}${ws()}}`;
}

/** records with their keys in any order */
export const shuffled = <T extends object>(arb: fc.Arbitrary<T>) =>
  arb.chain((o) =>
    fc
      .shuffledSubarray(Object.keys(o), { minLength: Object.keys(o).length })
      .map((ks) => Object.fromEntries(ks.map((k) => [k, (o as Record<string, unknown>)[k]])) as T),
  );

/** strings: any, short grapheme runs (unicode), empty */
export const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme', maxLength: 6 }), fc.constant(''));

/** what a value may be instead of what it should be */
export const scalar = fc.oneof(
  text,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
