/**
 * The item scanner's (jsonsplit-item.ts) fast lane: a value nobody notes anything in (a pod's containers,
 * its status' conditions, a row's cells' contents…), scanned to its end with nothing but validation. The
 * same grammar as the item scanner and the splitter's automaton (RFC 8259; UTF-8 sequences not checked),
 * in one loop with its own small stack and no facts: most of an item's bytes go through here.
 */

/** gave up: the chunk ended inside the value */
export const SCAN_MORE = -1;
/** gave up: not accepted here (malformed, too deep): the automaton decides */
export const SCAN_REFUSED = -2;

const OBJ = 1;
const STACK = 130;
/** the size of the stack skipValue is given (its caller's: an item scanner owns one) */
export const SKIP_STACK = STACK + 2;

export function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

export function ws(b: Uint8Array, i: number, n: number): number {
  while (i < n) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
  return i;
}

/**
 * The rest of a string from `i`, a byte its plain part stopped at (a backslash or a control character):
 * the index after its closing quote.
 */
export function strRest(b: Uint8Array, i: number, n: number): number {
  for (;;) {
    if (i >= n) return SCAN_MORE;
    const c = b[i]!;
    if (c === 0x22) return i + 1;
    if (c === 0x5c) {
      if (i + 1 >= n) return SCAN_MORE;
      const e = b[i + 1]!;
      if (e === 0x75) {
        if (i + 5 >= n) return SCAN_MORE;
        if (!isHex(b[i + 2]!) || !isHex(b[i + 3]!) || !isHex(b[i + 4]!) || !isHex(b[i + 5]!))
          return SCAN_REFUSED;
        i += 6;
      } else if (
        e === 0x22 ||
        e === 0x5c ||
        e === 0x2f ||
        e === 0x62 ||
        e === 0x66 ||
        e === 0x6e ||
        e === 0x72 ||
        e === 0x74
      )
        i += 2;
      else return SCAN_REFUSED;
    } else if (c < 0x20) return SCAN_REFUSED;
    else i++;
  }
}

/** a string whose opening quote is at `i`: the index after its closing quote */
export function str(b: Uint8Array, i: number, n: number): number {
  i = plain(b, i + 1, n);
  return i >= n ? SCAN_MORE : b[i] === 0x22 ? i + 1 : strRest(b, i, n);
}

function digits(b: Uint8Array, i: number, n: number): number {
  const from = i;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x30 || c > 0x39) break;
    i++;
  }
  return i === n ? SCAN_MORE : i === from ? SCAN_REFUSED : i;
}

/** a number (RFC 8259) or a literal at `i`: where it ends (what follows is the caller's to check) */
export function scalar(b: Uint8Array, i: number, n: number): number {
  let c = b[i]!;
  if (c === 0x74 || c === 0x6e) {
    // true, null
    if (i + 3 >= n) return SCAN_MORE;
    if (
      c === 0x74
        ? b[i + 1] !== 0x72 || b[i + 2] !== 0x75 || b[i + 3] !== 0x65
        : b[i + 1] !== 0x75 || b[i + 2] !== 0x6c || b[i + 3] !== 0x6c
    ) {
      return SCAN_REFUSED;
    }
    return i + 4;
  }
  if (c === 0x66) {
    if (i + 4 >= n) return SCAN_MORE;
    if (b[i + 1] !== 0x61 || b[i + 2] !== 0x6c || b[i + 3] !== 0x73 || b[i + 4] !== 0x65) return SCAN_REFUSED;
    return i + 5;
  }
  if (c === 0x2d) i++;
  if (i >= n) return SCAN_MORE;
  c = b[i]!;
  if (c === 0x30) i++;
  else if (c >= 0x31 && c <= 0x39) i = digits(b, i, n);
  else return SCAN_REFUSED;
  if (i < 0 || i >= n) return i < 0 ? i : SCAN_MORE;
  if (b[i] === 0x2e) {
    i = digits(b, i + 1, n);
    if (i < 0) return i;
  }
  c = b[i]!;
  if (c === 0x65 || c === 0x45) {
    i++;
    if (i >= n) return SCAN_MORE;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    i = digits(b, i, n);
  }
  return i;
}

/** a key at `i` (its quote), the colon and the whitespace after it: where the member's value begins */
function key(b: Uint8Array, i: number, n: number): number {
  if (b[i] !== 0x22) return SCAN_REFUSED;
  i = str(b, i, n);
  if (i < 0) return i;
  if (i < n && b[i]! <= 0x20) i = ws(b, i, n);
  if (i >= n) return SCAN_MORE;
  if (b[i] !== 0x3a) return SCAN_REFUSED;
  i++;
  if (i < n && b[i]! <= 0x20) i = ws(b, i, n);
  return i >= n ? SCAN_MORE : i;
}

/**
 * The plain bytes of a string from `i` (after its opening quote): the index of the first byte that is
 * not one (a quote, a backslash or a control character), or `n`. Four bytes a turn: most bytes of an
 * item are strings' bytes (2,700 of a canned pod's 3,100), and unrolled skipValue read those pods 15-20%
 * faster (same run; bench/lib/idiombench.ts: the canned pods' strings 1.2× faster, short strings even).
 */
export function plain(b: Uint8Array, i: number, n: number): number {
  let c = 0;
  for (; i + 4 <= n; i += 4) {
    c = b[i]!;
    if (c <= 0x22 ? c === 0x22 || c < 0x20 : c === 0x5c) return i;
    c = b[i + 1]!;
    if (c <= 0x22 ? c === 0x22 || c < 0x20 : c === 0x5c) return i + 1;
    c = b[i + 2]!;
    if (c <= 0x22 ? c === 0x22 || c < 0x20 : c === 0x5c) return i + 2;
    c = b[i + 3]!;
    if (c <= 0x22 ? c === 0x22 || c < 0x20 : c === 0x5c) return i + 3;
  }
  for (; i < n; i++) {
    c = b[i]!;
    if (c <= 0x22 ? c === 0x22 || c < 0x20 : c === 0x5c) return i;
  }
  return i;
}

/**
 * The value whose first byte is `b[i]` (not whitespace, `i < n`), scanned up to `n` and nested at most
 * `room` deep: its end (exclusive), or SCAN_MORE / SCAN_REFUSED. `kinds`: the container kinds per depth,
 * SKIP_STACK long (the caller's, so nothing here is shared).
 */
export function skipValue(b: Uint8Array, i: number, n: number, room: number, kinds: Uint8Array): number {
  let d = 0;
  let c = 0;
  for (;;) {
    // a value begins at i
    c = b[i]!;
    if (c === 0x22) {
      i = plain(b, i + 1, n);
      if (i >= n) return SCAN_MORE;
      i = b[i] === 0x22 ? i + 1 : strRest(b, i, n);
      if (i < 0) return i;
    } else if (c === 0x7b || c === 0x5b) {
      if (++d > room || d > STACK) return SCAN_REFUSED;
      kinds[d] = c === 0x7b ? OBJ : 0;
      i++;
      if (i < n && b[i]! <= 0x20) i = ws(b, i, n);
      if (i >= n) return SCAN_MORE;
      if (b[i] === c + 2) {
        // `{}` or `[]` (the closers are the openers + 2)
        i++;
        d--;
      } else {
        if (c === 0x7b) {
          i = key(b, i, n);
          if (i < 0) return i;
        }
        continue;
      }
    } else {
      i = scalar(b, i, n);
      if (i < 0) return i;
    }
    // after a value: its container goes on or closes
    for (;;) {
      if (d === 0) return i;
      if (i < n && b[i]! <= 0x20) i = ws(b, i, n);
      if (i >= n) return SCAN_MORE;
      c = b[i]!;
      if (c === 0x2c) {
        i++;
        if (i < n && b[i]! <= 0x20) i = ws(b, i, n);
        if (i >= n) return SCAN_MORE;
        if (kinds[d] === OBJ) {
          i = key(b, i, n);
          if (i < 0) return i;
        }
        break;
      }
      if (c !== (kinds[d] === OBJ ? 0x7d : 0x5d)) return SCAN_REFUSED;
      i++;
      d--;
    }
  }
}
