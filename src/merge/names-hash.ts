/**
 * The digest in shortened fleet names (names.ts): SHA-256 (FIPS 180-4) of the name's UTF-8 bytes, its
 * first 64 bits written in base 36 as exactly 13 characters (`[0-9a-z]`, zero-padded).
 *
 * Why SHA-256 and not a cheaper hash such as FNV-1a: a shortened name is resolved back to an object by
 * matching the digests of the names a cluster has, so whoever may create objects next to someone else's
 * must not be able to make a second name with the same digest (FNV-1a second preimages are a small
 * search; for 64 bits of SHA-256 they are out of reach). It must be synchronous (names are encoded inside
 * the list and watch rewriting, which WebCrypto's promise-only digest cannot serve) and the same on Node
 * and workerd, hence this small implementation; the tests check it against node:crypto. It only ever runs
 * for names too long to show as they are, so its speed does not matter.
 */

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** SHA-256 of `data`: the 8 words of the digest. */
export function sha256Words(data: Uint8Array): Uint32Array {
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  // the message, a 1 bit, zeros, and the bit length in the last 8 bytes of a whole number of 64-byte blocks
  const blocks = Math.ceil((data.length + 9) / 64);
  const m = new Uint8Array(blocks * 64);
  m.set(data);
  m[data.length] = 0x80;
  const bits = data.length * 8;
  const view = new DataView(m.buffer);
  view.setUint32(m.length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(m.length - 4, bits >>> 0);
  const w = new Uint32Array(64);
  for (let b = 0; b < blocks; b++) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(b * 64 + i * 4);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3);
      const s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) >>> 0;
    }
    let [a, bb, c, d, e, f, g, hh] = h as unknown as number[];
    for (let i = 0; i < 64; i++) {
      const t1 =
        (hh! + (rotr(e!, 6) ^ rotr(e!, 11) ^ rotr(e!, 25)) + ((e! & f!) ^ (~e! & g!)) + K[i]! + w[i]!) >>> 0;
      const t2 = ((rotr(a!, 2) ^ rotr(a!, 13) ^ rotr(a!, 22)) + ((a! & bb!) ^ (a! & c!) ^ (bb! & c!))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d! + t1) >>> 0;
      d = c;
      c = bb;
      bb = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] = h[0]! + a!;
    h[1] = h[1]! + bb!;
    h[2] = h[2]! + c!;
    h[3] = h[3]! + d!;
    h[4] = h[4]! + e!;
    h[5] = h[5]! + f!;
    h[6] = h[6]! + g!;
    h[7] = h[7]! + hh!;
  }
  return h;
}

/** Length of {@link nameDigest}'s answer: 2^64 needs 13 base-36 digits. */
export const NAME_DIGEST_LENGTH = 13;

const utf8 = new TextEncoder();

/** The first 64 bits of SHA-256(UTF-8 of `name`), base 36, 13 characters. */
export function nameDigest(name: string): string {
  const h = sha256Words(utf8.encode(name));
  const n = (BigInt(h[0]!) << 32n) | BigInt(h[1]!);
  return n.toString(36).padStart(NAME_DIGEST_LENGTH, '0');
}
