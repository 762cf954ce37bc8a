/** Byte helpers shared by every layer (Web APIs only: this runs on Node and in workerd alike). */

/**
 * One array holding `parts` back to back. `total` may be given when the caller already counted it
 * (readers usually do, to enforce a limit); a wrong `total` is a bug, so it is checked.
 */
export function concatBytes(parts: readonly Uint8Array[], total?: number): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  if (total !== undefined && total !== size) {
    throw new RangeError(`concatBytes: ${size} bytes given, ${total} announced`);
  }
  // one part is returned as is: callers own what they read and never mutate it afterwards
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
