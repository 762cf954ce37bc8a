/**
 * Scanning JSON texts without parsing them: where a value ends, an object's members and their ranges, and
 * splicing replacements into a text. The byte-level rewriting of objects (objects.ts) and of their
 * references (references.ts) share it. The texts are valid JSON (the list splitter checked them).
 */

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export function skipWs(t: string, i: number): number {
  let c = t.charCodeAt(i);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++i);
  return i;
}

/** index just past the string whose opening quote is at `i`; -1 when it does not end */
export function stringEnd(t: string, i: number): number {
  for (let from = i + 1; ; ) {
    const q = t.indexOf('"', from);
    if (q < 0) return -1;
    let k = q - 1;
    while (t.charCodeAt(k) === BACKSLASH) k--;
    // an even run of backslashes before the quote escapes only itself
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** index just past the JSON value starting at `i` (the text is valid JSON: the splitter checked it) */
export function valueEnd(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === QUOTE) return stringEnd(t, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < t.length; j++) {
      const d = t.charCodeAt(j);
      if (d === QUOTE) {
        j = stringEnd(t, j) - 1;
        if (j < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return j + 1;
    }
    return -1;
  }
  let j = i;
  for (; j < t.length; j++) {
    const d = t.charCodeAt(j);
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09) break;
  }
  return j;
}

/** One member of an object's text: its key (written without escapes) and its value's range. */
export interface Member {
  key: string;
  from: number;
  to: number;
}

/**
 * The members of the object whose `{` is at `i`, and the index of its `}`; undefined when a key appears
 * twice (JSON.parse keeps the last value at the first key's place: the parsing path does that).
 */
export function membersOf(t: string, i: number): { members: Member[]; close: number } | undefined {
  const members: Member[] = [];
  i = skipWs(t, i + 1);
  if (t.charCodeAt(i) === 0x7d) return { members, close: i };
  for (;;) {
    if (t.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = stringEnd(t, i);
    if (keyEnd < 0) return undefined;
    // a key written with escapes is compared by its value (a marker or a duplicate may hide behind them)
    const key = stringValue(t.slice(i, keyEnd));
    for (let k = 0; k < members.length; k++) if (members[k]!.key === key) return undefined;
    i = skipWs(t, keyEnd);
    if (t.charCodeAt(i) !== 0x3a) return undefined;
    const from = skipWs(t, i + 1);
    const to = valueEnd(t, from);
    if (to < 0) return undefined;
    members.push({ key, from, to });
    i = skipWs(t, to);
    const c = t.charCodeAt(i);
    if (c === 0x7d) return { members, close: i };
    if (c !== 0x2c) return undefined;
    i = skipWs(t, i + 1);
  }
}

/** a JSON string's value from its text (quotes included) */
export function stringValue(raw: string): string {
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

/** The text of `t` from `at` to `end` with ranges replaced, in order. */
export class Splice {
  private readonly parts: string[] = [];
  constructor(
    private readonly t: string,
    private at = 0,
    private readonly end = t.length,
  ) {}
  put(from: number, to: number, text: string): void {
    this.parts.push(this.t.slice(this.at, from), text);
    this.at = to;
  }
  done(): string {
    this.parts.push(this.t.slice(this.at, this.end));
    return this.parts.join('');
  }
}
