/**
 * `kubectl.kubernetes.io/last-applied-configuration`: client-side apply's record of what it last applied,
 * a JSON object inside an annotation's string. kubectl diffs it against the manifest it applies next
 * (a three-way merge): when its `metadata.name` or `metadata.namespace` differs from the manifest's, every
 * apply is a change (`configured`, never `unchanged`). The fleet stores it as the cluster knows the object
 * (plain name, plain namespace: writes.ts), so on the way out it is shown as the object is: the name the
 * answer gives the object (objects.ts toFleetObject; the byte path of itembytes.ts leaves such items to
 * it), the namespace as the request spelled it (plan/namespace.ts). docs/names.md.
 *
 * Byte-careful: only the two string values change; every other character of the record (key order,
 * spacing, numbers, kubectl's trailing newline) is kept as it was, so nothing else looks changed to a
 * client that compares it. Pure; never throws: a record that is not a JSON object is left alone.
 */

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** A value of the record shown otherwise: `plain` (as stored) becomes `shown`. */
export interface Shown {
  plain: string;
  shown: string;
}

/**
 * The record with `metadata.name` (when it is `name.plain`) shown as `name.shown`, and `metadata.namespace`
 * likewise; undefined when nothing changes (or the text is not a JSON object).
 */
export function showLastApplied(text: string, edit: { name?: Shown; namespace?: Shown }): string | undefined {
  const md = stringMembers(text, 'metadata');
  if (!md) return undefined;
  const splices: Array<{ from: number; to: number; value: string }> = [];
  for (const [key, s] of [
    ['name', edit.name],
    ['namespace', edit.namespace],
  ] as const) {
    const at = md.get(key);
    if (!s || !at || s.plain === s.shown) continue;
    if (stringValue(text, at.from, at.to) === s.plain)
      splices.push({ ...at, value: JSON.stringify(s.shown) });
  }
  if (splices.length === 0) return undefined;
  splices.sort((a, b) => a.from - b.from);
  let out = '';
  let at = 0;
  for (const sp of splices) {
    out += text.slice(at, sp.from) + sp.value;
    at = sp.to;
  }
  return out + text.slice(at);
}

/** the string a JSON string token `text[from..to)` stands for (undefined: a malformed escape) */
function stringValue(text: string, from: number, to: number): string | undefined {
  const raw = text.slice(from, to);
  try {
    return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  } catch {
    return undefined;
  }
}

type Members = Map<string, { from: number; to: number }>;

/** one JSON token after optional whitespace: a string, a punctuation mark, or a number's or literal's run */
const TOKEN = /\s*("(?:[^"\\]|\\.)*"|[{}[\],:]|[^\s{}[\],:"]+)/y;

/**
 * Where the string values of the members of the object under the top-level key `inside` of the JSON
 * object `text` lie, by key; undefined when `text` is not an object.
 */
function stringMembers(text: string, inside: string): Members | undefined {
  TOKEN.lastIndex = 0;
  let depth = 0;
  let pos = 0;
  let last = '';
  let key: string | undefined;
  // the depth whose members are collected (-1: none yet, or no more)
  let target = -1;
  let out: Members = new Map();
  for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) {
    const t = m[1]!;
    const from = TOKEN.lastIndex - t.length;
    // one object, nothing before or after it
    if (depth === 0 && (t !== '{' || pos > 0)) return undefined;
    pos = TOKEN.lastIndex;
    if (t === ':') {
      key = last;
      continue;
    }
    if (key !== undefined) {
      const k = stringValue(key, 0, key.length);
      if (k !== undefined && depth === target && t[0] === '"') out.set(k, { from, to: pos });
      // a repeated key: the last one is the one a JSON reader keeps
      else if (depth === 1 && k === inside && t === '{') [out, target] = [new Map(), 2];
      key = undefined;
    }
    if (t === '{' || t === '[') depth++;
    else if (t === '}' || t === ']') {
      if (depth === 2 && target === 2) target = -1;
      depth--;
    }
    last = t;
  }
  return depth === 0 && pos > 0 && text.slice(pos).trim() === '' ? out : undefined;
}

/** `annotations`' record (when it has one) shown with `edit` (see {@link showLastApplied}), in place. */
export function showRecordIn(annotations: unknown, edit: { name?: Shown; namespace?: Shown }): void {
  const a = annotations as Record<string, unknown> | undefined;
  const text = a && typeof a === 'object' ? a[LAST_APPLIED] : undefined;
  const shown = typeof text === 'string' ? showLastApplied(text, edit) : undefined;
  if (shown !== undefined) a![LAST_APPLIED] = shown;
}
