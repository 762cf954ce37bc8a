/**
 * The scalar half of ./yaml.ts: the core schema's reading of plain scalars, quoted scalars with their
 * escapes and line folding, the text of block scalars, and the small helpers the reader shares.
 */

export class YamlError extends Error {
  override name = 'YamlError';
}

const NUL = /^(?:~|null|Null|NULL|)$/;
const BOOL = /^(?:true|True|TRUE|false|False|FALSE)$/;
const INT = /^[-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

/** the core schema's reading of a plain scalar */
export function resolve(s: string): unknown {
  if (NUL.test(s)) return null;
  if (BOOL.test(s)) return s[0] === 't' || s[0] === 'T';
  if (INT.test(s) || FLOAT.test(s)) return Number(s);
  if (/^0o[0-7]+$/.test(s)) return Number.parseInt(s.slice(2), 8);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return Number.parseInt(s.slice(2), 16);
  const inf = /^([-+]?)\.(?:inf|Inf|INF)$/.exec(s);
  if (inf) return inf[1] === '-' ? -Infinity : Infinity;
  if (/^\.(?:nan|NaN|NAN)$/.test(s)) return Number.NaN;
  return s;
}

const ESC: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
};
const HEX: Record<string, number> = { x: 2, u: 4, U: 8 };

/** Line folding of a multi-line flow scalar: one break → a space, n breaks → n − 1 newlines. */
export function fold(lines: string[]): string {
  let out = lines[0]!;
  let breaks = 0;
  for (let k = 1; k < lines.length; k++) {
    const l = lines[k]!;
    if (l === '' && k < lines.length - 1) {
      breaks++;
      continue;
    }
    out += (breaks ? '\n'.repeat(breaks) : ' ') + l;
    breaks = 0;
  }
  return out;
}

/** YAML's white space is spaces and tabs only (JavaScript's `trim` also takes U+2028, U+00A0, …) */
export function trim(s: string): string {
  return s.replace(/^[ \t\n]+|[ \t\n]+$/g, '');
}

/** keys become strings, as JSON's: `1: a` → "1", `null: a` → "" */
export function keyOf(v: unknown): string {
  return v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** an own property even for `__proto__` */
export function define<T extends Record<string, unknown>>(o: T, key: string, value: unknown): T {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  return o;
}

/** A quoted scalar at `at`, single or double, folded across lines; `end` is just past its closing quote. */
export function readQuoted(
  s: string,
  at: number,
  fail: (what: string, at: number) => never,
): { text: string; end: number } {
  const q = s[at]!;
  let i = at + 1;
  let out = '';
  /** how much of `out` is safe from trimming before a line break (escaped white space) */
  let kept = 0;
  for (;;) {
    const c = s[i] ?? '';
    if (c === '') fail('unterminated quoted scalar', at);
    i++;
    if (c === q) {
      if (q === "'" && (s[i] ?? '') === "'") {
        out += "'";
        i++;
        continue;
      }
      return { text: out, end: i };
    }
    if (c === '\n' || (c === '\\' && q === '"' && (s[i] ?? '') === '\n')) {
      if (c === '\\') i++;
      else out = out.slice(0, kept) + out.slice(kept).replace(/[ \t]+$/, '');
      let breaks = 0;
      for (;;) {
        while ((s[i] ?? '') === ' ' || (s[i] ?? '') === '\t') i++;
        if ((s[i] ?? '') !== '\n') break;
        breaks++;
        i++;
      }
      // an escaped break joins; the breaks after it fold as the `yaml` package reads (and writes) them
      out +=
        c === '\\'
          ? breaks < 2
            ? ' '.repeat(breaks)
            : '\n'.repeat(breaks - 1)
          : breaks
            ? '\n'.repeat(breaks)
            : ' ';
      kept = out.length;
      continue;
    }
    if (c === '\\' && q === '"') {
      const e = s[i] ?? '';
      i++;
      const n = HEX[e];
      if (n) {
        const h = s.slice(i, i + n);
        if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== n) fail('bad escape', i - 2);
        out += String.fromCodePoint(Number.parseInt(h, 16));
        i += n;
      } else if (ESC[e] !== undefined) out += ESC[e];
      else fail(`unknown escape "\\${e}"`, i - 2);
      kept = out.length;
      continue;
    }
    out += c;
  }
}

/** The text of a block scalar from its lines (indentation removed): literal or folded, then chomped. */
export function blockText(lines: string[], folded: boolean, chomp: string): string {
  let n = lines.length;
  while (n > 0 && lines[n - 1] === '') n--;
  const trailing = lines.length - n;
  let text = '';
  if (!folded) text = lines.slice(0, n).join('\n');
  else {
    // folding: a break between two lines of text is a space; empty lines are the breaks left;
    // lines that start with white space keep their breaks
    let empties = 0;
    let prev: string | undefined;
    for (const l of lines.slice(0, n)) {
      if (l === '') {
        empties++;
        continue;
      }
      const normal = (x: string) => !(x.startsWith(' ') || x.startsWith('\t'));
      if (prev === undefined) text = '\n'.repeat(empties);
      else if (normal(prev) && normal(l)) text += empties ? '\n'.repeat(empties) : ' ';
      else text += '\n'.repeat(empties + 1);
      text += l;
      prev = l;
      empties = 0;
    }
  }
  if (chomp === '+') return `${text}${n ? '\n' : ''}${'\n'.repeat(trailing)}`;
  return n && chomp !== '-' ? `${text}\n` : text;
}

/**
 * The lines of a block scalar whose header ends at `from`, its indentation removed: up to the first
 * line indented no deeper than `parent` (or less than the content's indentation, `indent` when the
 * header gave it, else found from the first line of text). `end` is the end of the last line taken.
 */
export function blockLines(
  s: string,
  from: number,
  parent: number,
  indent: number,
  fail: (what: string, at: number) => never,
): { lines: string[]; end: number } {
  let nl = s.indexOf('\n', from);
  const lines: string[] = [];
  let end = nl < 0 ? s.length : nl;
  let leading = 0;
  while (nl >= 0) {
    const p = nl + 1;
    nl = s.indexOf('\n', p);
    const line = s.slice(p, nl < 0 ? undefined : nl);
    if (nl < 0 && line === '') break;
    const lead = /^ */.exec(line)![0].length;
    const empty = lead === line.length;
    if (indent < 0) {
      if (empty) {
        leading = Math.max(leading, line.length);
        lines.push('');
        end = nl < 0 ? s.length : nl;
        continue;
      }
      if (lead <= parent) break;
      indent = lead;
      if (leading > indent) fail('a leading empty line has more spaces than the text', p);
    }
    if (
      !empty &&
      (lead < indent ||
        ((s.startsWith('---', p) || s.startsWith('...', p)) && ' \t\n'.includes(s[p + 3] ?? '\n')))
    )
      break;
    if (/^ *\t/.test(line) && line.indexOf('\t') < indent && !empty)
      fail('tabs are not allowed as indentation', p);
    lines.push(line.length > indent ? line.slice(indent) : '');
    end = nl < 0 ? s.length : nl;
  }
  return { lines, end };
}

/**
 * After a plain scalar's line (`from` at its line break): the start of the line that goes on with it
 * (more indented than `parent`, not a comment or a document marker), or -1; and the empty lines between.
 */
export function continuation(s: string, from: number, parent: number): { next: number; empties: number } {
  let p = from;
  let empties = 0;
  while (s[p] === '\n') {
    let q = p + 1;
    while (s[q] === ' ') q++;
    const ind = q - p - 1;
    while (s[q] === ' ' || s[q] === '\t') q++;
    if (s[q] === '\n') {
      empties++;
      p = q;
      continue;
    }
    const marker =
      ind === 0 && (s.startsWith('---', q) || s.startsWith('...', q)) && ' \t\n'.includes(s[q + 3] ?? '\n');
    if (q < s.length && s[q] !== '#' && ind > parent && !marker) return { next: q, empties };
    break;
  }
  return { next: -1, empties };
}

/** A core tag on a scalar (`!!str 1`, `!!int "1"`, `! 12`); other tags leave the value as it is. */
export function retag(tag: string, raw: string, v: unknown, fail: (what: string) => never): unknown {
  if (tag === '!' || tag === '!!str') return raw;
  if (tag === '!!int' || tag === '!!float' || tag === '!!bool' || tag === '!!null') {
    const r = resolve(raw);
    const want = tag === '!!bool' ? 'boolean' : tag === '!!null' ? 'object' : 'number';
    if (typeof r !== want) fail(`"${raw}" is not a ${tag.slice(2)}`);
    return r;
  }
  return v;
}
