/**
 * A short string as UTF-8 bytes. TextEncoder#encode on Node 20 goes through C++ and gives each answer a
 * buffer of its own outside the heap (its own backing store the GC tracks); a merged list encoded a few
 * RV texts per cluster that way. An ASCII string is copied here into a heap Uint8Array instead.
 */
const encoder = new TextEncoder();

export function utf8Short(s: string): Uint8Array {
  const n = s.length;
  if (n > 64) return encoder.encode(s);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return encoder.encode(s);
    out[i] = c;
  }
  return out;
}
