/**
 * The digest in shortened fleet names (names.ts): SHA-256 (FIPS 180-4) of the name's UTF-8 bytes, its
 * first 64 bits written in base 36 as exactly 13 characters (`[0-9a-z]`, zero-padded).
 *
 * Why SHA-256 and not a cheaper hash such as FNV-1a: a shortened name is resolved back to an object by
 * matching the digests of the names a cluster has, so whoever may create objects next to someone else's
 * must not be able to make a second name with the same digest (FNV-1a second preimages are a small
 * search; for 64 bits of SHA-256 they are out of reach).
 *
 * Why node:crypto in code that also runs on Workers: the digest must be synchronous (names are encoded
 * inside the list and watch rewriting, which WebCrypto's promise-only digest cannot serve) and the same on
 * Node and workerd. Both runtimes ship node:crypto's createHash natively (workerd with the `nodejs_compat`
 * flag wrangler.toml sets), so the bundle carries no hash of its own and none is written out here. It
 * only ever runs for names too long to show as they are, so its speed does not matter.
 */
import { createHash } from 'node:crypto';

/** Length of {@link nameDigest}'s answer: 2^64 needs 13 base-36 digits. */
export const NAME_DIGEST_LENGTH = 13;

/** The first 64 bits of SHA-256(UTF-8 of `name`), base 36, 13 characters. */
export function nameDigest(name: string): string {
  const hex = createHash('sha256').update(name, 'utf8').digest('hex');
  return BigInt(`0x${hex.slice(0, 16)}`)
    .toString(36)
    .padStart(NAME_DIGEST_LENGTH, '0');
}
