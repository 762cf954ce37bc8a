/**
 * Resource versions as apimachinery compares them (k8s.io/apimachinery/pkg/util/resourceversion): a
 * member cluster's own RV is a decimal without leading zeros, of any length. The fleet's composite RVs
 * (src/merge/rv/index.ts) are built from these.
 */

/** Thrown by {@link compareResourceVersion} for RVs that are not well formed (as apimachinery's error). */
export class InvalidResourceVersionError extends Error {
  override readonly name = 'InvalidResourceVersionError';
  constructor(readonly rv: string) {
    super(`resource version is not well formed: ${rv}`);
  }
}

/** True for `[1-9][0-9]*`: what apimachinery's CompareResourceVersion accepts. */
export function isWellFormedResourceVersion(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  let c = s.charCodeAt(0);
  if (c < 0x31 || c > 0x39) return false;
  for (let i = 1; i < n; i++) {
    c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * k8s.io/apimachinery/pkg/util/resourceversion.CompareResourceVersion: -1, 0 or +1; throws
 * {@link InvalidResourceVersionError} when either RV is not `[1-9][0-9]*`. No length limit.
 */
export function compareResourceVersion(a: string, b: string): -1 | 0 | 1 {
  if (!isWellFormedResourceVersion(a)) throw new InvalidResourceVersionError(a);
  if (!isWellFormedResourceVersion(b)) throw new InvalidResourceVersionError(b);
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}
