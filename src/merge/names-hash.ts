/**
 * The digest in shortened fleet names (names.ts): SHA-256 (FIPS 180-4) of the name's UTF-8 bytes, its
 * first 64 bits written in base 36 as exactly 13 characters (`[0-9a-z]`, zero-padded).
 *
 * Why SHA-256 and not a cheaper hash such as FNV-1a: a shortened name is resolved back to an object by
 * matching the digests of the names a cluster has, so whoever may create objects next to someone else's
 * must not be able to make a second name with the same digest (FNV-1a second preimages are a small
 * search; for 64 bits of SHA-256 they are out of reach). It must be synchronous (names are encoded inside
 * the list and watch rewriting, which WebCrypto's promise-only digest cannot serve) and the same on Node
 * and workerd, without `nodejs_compat` for node:crypto: so SHA-256 is written out here (≈ 0.6 KiB of the
 * worker bundle where @noble/hashes took 5.3 KiB), checked against the FIPS 180-4 examples and against
 * node:crypto for every length across several blocks (names-hash.test.ts). It only ever runs for names
 * too long to show as they are, so its speed does not matter.
 */

/** Length of {@link nameDigest}'s answer: 2^64 needs 13 base-36 digits. */
export const NAME_DIGEST_LENGTH = 13;

const utf8 = new TextEncoder();

/** The first 64 primes. */
const PRIMES: number[] = [];
for (let n = 2; PRIMES.length < 64; n++) if (PRIMES.every((p) => n % p !== 0)) PRIMES.push(n);

/** The first 32 bits of the fractional part of `x` (exact for these roots: the test checks every constant). */
const frac32 = (x: number) => ((x - Math.floor(x)) * 2 ** 32) >>> 0;

/** FIPS 180-4 §4.2.2: the fractional parts of the cube roots of the first 64 primes. */
export const K = Uint32Array.from(PRIMES, (p) => frac32(Math.cbrt(p)));

/** FIPS 180-4 §5.3.3: the initial hash value, from the square roots of the first 8 primes. */
export const H0 = PRIMES.slice(0, 8).map((p) => frac32(Math.sqrt(p)));

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** SHA-256 of `data` (FIPS 180-4 §6.2), 32 bytes. */
export function sha256(data: Uint8Array): Uint8Array {
  const n = data.length;
  // §5.1.1 padding, as big-endian words: the bytes, 0x80, zeros to 56 mod 64, the bit length in 64 bits
  const m = new Uint32Array(((n + 72) >> 6) << 4);
  for (let i = 0; i <= n; i++) m[i >> 2] = m[i >> 2]! | ((i < n ? data[i]! : 0x80) << (24 - 8 * (i & 3)));
  m[m.length - 2] = n / 0x20000000;
  m[m.length - 1] = n * 8;
  const h = H0.slice();
  const w = new Uint32Array(64);
  for (let off = 0; off < m.length; off += 16) {
    let [a, b, c, d, e, f, g, k] = h as [number, number, number, number, number, number, number, number];
    for (let t = 0; t < 64; t++) {
      if (t < 16) w[t] = m[off + t]!;
      else {
        const x = w[t - 15]!;
        const y = w[t - 2]!;
        w[t] =
          w[t - 16]! +
          (rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3)) +
          w[t - 7]! +
          (rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10));
      }
      const t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t]! + w[t]!;
      const t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    [a, b, c, d, e, f, g, k].forEach((v, i) => {
      h[i] = (h[i]! + v) | 0;
    });
  }
  return Uint8Array.from({ length: 32 }, (_, i) => h[i >> 2]! >>> (24 - 8 * (i & 3)));
}

/** The first 64 bits of SHA-256(UTF-8 of `name`), base 36, 13 characters. */
export function nameDigest(name: string): string {
  const d = sha256(utf8.encode(name));
  let n = 0n;
  for (let i = 0; i < 8; i++) n = (n << 8n) | BigInt(d[i]!);
  return n.toString(36).padStart(NAME_DIGEST_LENGTH, '0');
}
