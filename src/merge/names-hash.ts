/**
 * The digest in shortened fleet names (names.ts): SHA-256 (FIPS 180-4) of the name's UTF-8 bytes, its
 * first 64 bits written in base 36 as exactly 13 characters (`[0-9a-z]`, zero-padded).
 *
 * Why SHA-256 and not a cheaper hash such as FNV-1a: a shortened name is resolved back to an object by
 * matching the digests of the names a cluster has, so whoever may create objects next to someone else's
 * must not be able to make a second name with the same digest (FNV-1a second preimages are a small
 * search; for 64 bits of SHA-256 they are out of reach). It must be synchronous (names are encoded inside
 * the list and watch rewriting, which WebCrypto's promise-only digest cannot serve) and the same on Node
 * and workerd: @noble/hashes' audited pure-JS SHA-256 is both. It only ever runs for names too long to
 * show as they are, so its speed does not matter.
 */
import { sha256 } from '@noble/hashes/sha2.js';

/** Length of {@link nameDigest}'s answer: 2^64 needs 13 base-36 digits. */
export const NAME_DIGEST_LENGTH = 13;

const utf8 = new TextEncoder();

/** The first 64 bits of SHA-256(UTF-8 of `name`), base 36, 13 characters. */
export function nameDigest(name: string): string {
  const d = sha256(utf8.encode(name));
  let n = 0n;
  for (let i = 0; i < 8; i++) n = (n << 8n) | BigInt(d[i]!);
  return n.toString(36).padStart(NAME_DIGEST_LENGTH, '0');
}
