/**
 * How deep a request body may nest. kube-apiserver's JSON decoder refuses nesting past 10,000 levels
 * ("exceeded max depth"); the fleet must refuse earlier, because it re-serialises bodies it rewrites and
 * V8's JSON.stringify recurses: on Node 20's default stack it overflows at ≈ 4,170 levels (measured),
 * less when called deep in a request's stack, and workerd's stack is no larger. 1,000 levels is far past
 * any real object (CRD schemas nest a few dozen deep) and leaves most of the stack free.
 */
export const MAX_BODY_DEPTH = 1_000;

/**
 * A value as kube-apiserver's JSON serializer writes it: Go's json.Encoder ends every body with a newline,
 * and clients that compare bodies as text (the Python client's tests do) see the difference. Every body
 * the fleet re-serialises (a rewritten object or Status) goes through here.
 */
export function kubeJson(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

/**
 * Whether `value` nests arrays/objects more than `limit` levels deep (a scalar is depth 0, `{}` depth 1).
 * Iterative, so it cannot overflow the stack on the very input it guards against.
 */
export function nestsDeeperThan(value: unknown, limit = MAX_BODY_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth] = top;
    if (typeof v !== 'object' || v === null) continue;
    if (depth + 1 > limit) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push([c, depth + 1]);
  }
  return false;
}

/** The message of the 400 for a body past the limit (kube's decoder says "exceeded max depth"). */
export function tooDeepMessage(limit = MAX_BODY_DEPTH): string {
  return `the request body could not be decoded: exceeded max depth (objects and arrays nest at most ${limit} levels)`;
}

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON `bytes` nest arrays/objects more than `limit` levels deep, read from the bytes alone (no
 * parse, one pass, strings skipped): for a body the fleet relays without parsing (a passthrough write),
 * which must still be refused before a cluster sees it. Malformed JSON is not judged here (whoever
 * parses it answers that); only depth is.
 */
export function bytesNestDeeperThan(bytes: Uint8Array, limit = MAX_BODY_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
      if (++depth > limit) return true;
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) depth--;
  }
  return false;
}
