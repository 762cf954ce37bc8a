/**
 * Annotations added to an item from its bytes (the fleet's propagation annotations, list/propagation.ts):
 * spliced in where the splitter's facts say metadata's annotations lie, so an enriched item is neither
 * serialised again nor, in the merge, parsed again.
 */
import type { ItemFacts } from './facts.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `b` with `add` in its metadata's annotations; undefined when the bytes cannot say where (parse it). */
export function addAnnotations(
  b: Uint8Array,
  f: ItemFacts,
  add: Record<string, string>,
): Uint8Array | undefined {
  if (f.odd || f.mdFrom < 0 || b[f.mdFrom] !== 0x7b) return undefined;
  let members = '';
  for (const [k, v] of Object.entries(add))
    members += `${members ? ',' : ''}${JSON.stringify(k)}:${JSON.stringify(v)}`;
  if (!members) return b;
  let at: number;
  let text: string;
  if (f.annFrom >= 0) {
    if (b[f.annFrom] !== 0x7b) return undefined;
    // a key it has already would be given twice: left to parsing
    const ann = decoder.decode(b.subarray(f.annFrom, f.annTo));
    for (const k of Object.keys(add)) if (ann.includes(JSON.stringify(k))) return undefined;
    at = f.annTo - 1;
    text = f.annKeys ? `,${members}` : members;
  } else {
    at = f.mdTo - 1;
    text = `${f.mdKeys ? ',' : ''}"annotations":{${members}}`;
  }
  const ins = encoder.encode(text);
  const out = new Uint8Array(b.length + ins.length);
  out.set(b.subarray(0, at));
  out.set(ins, at);
  out.set(b.subarray(at), at + ins.length);
  return out;
}

/** The JSON string at `b[from..to)` (a facts range), or undefined when there is none. */
export function stringAt(b: Uint8Array, from: number, to: number): string | undefined {
  if (from < 0 || b[from] !== 0x22) return undefined;
  const v = JSON.parse(decoder.decode(b.subarray(from, to)));
  return typeof v === 'string' ? v : undefined;
}
