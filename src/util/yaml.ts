/**
 * A YAML 1.2 reader for what the fleet reads as YAML: its configuration, kubeconfigs and `application/yaml`
 * request bodies. One document, the core schema (null, bool, int, float, else string), block and flow
 * collections, plain, quoted and block scalars (literal, folded, chomping, indentation indicators),
 * anchors and aliases, comments, the core tags (`!!str`, `!!int`, …; others fall back to the untagged
 * value, as the `yaml` package does). Refused with an error naming the line and column: explicit `?`
 * keys, several documents, duplicate keys, tabs as indentation, more than 100 aliases (an alias bomb).
 *
 * Why not the `yaml` package: it is ≈ 96 KiB of the worker's bundle (a size budget), for a reader. Its
 * answers are the oracle of ./yaml.test.ts (random values in its every output style, and real documents).
 * Keys become strings as JSON needs (`1: a` → `{"1": "a"}`, `null: a` → `{"": a}`).
 */

import {
  blockLines,
  blockText,
  continuation,
  define,
  fold,
  keyOf,
  readQuoted,
  resolve,
  retag,
  trim,
  YamlError,
} from './yaml-scalars.ts';

export { YamlError };

const BLANK = ' \t\n';
const FLOW_END = ',[]{}';

class Reader {
  /** the text with a line break in front, so that every line (the first too) starts after one */
  private readonly s: string;
  private i = 0;
  /** the indentation of the line `i` is on, when `i` is at that line's first content (-1: no more) */
  private ind = -1;
  private readonly anchors = new Map<string, unknown>();
  private aliases = 0;
  /** the text of the scalar just read, before the schema's reading (what a tag applies to) */
  private raw: string | undefined;

  constructor(text: string) {
    this.s = `\n${text}`;
  }

  private fail(what: string, at = this.i): never {
    const before = this.s.slice(1, Math.max(at, 1)).split('\n');
    throw new YamlError(`${what} at line ${before.length}, column ${before.at(-1)!.length + 1}`);
  }

  private col(at = this.i): number {
    return at - this.s.lastIndexOf('\n', at - 1) - 1;
  }
  private ch(k = 0): string {
    return this.s[this.i + k] ?? '';
  }
  /** a space, tab, line break or the end: what separates tokens */
  private sep(c: string): boolean {
    return c === '' || BLANK.includes(c);
  }
  private spaces(): void {
    while (this.ch() === ' ' || this.ch() === '\t') this.i++;
  }
  /** at the end of the line's content (a comment counts as the end) */
  private eol(at = this.i): boolean {
    const c = this.s[at] ?? '';
    return c === '\n' || c === '' || (c === '#' && this.sep(this.s[at - 1]!));
  }
  /** `---` or `...` at the start of a line */
  private marker(at = this.i): boolean {
    const m = this.s.slice(at, at + 3);
    return this.s[at - 1] === '\n' && (m === '---' || m === '...') && this.sep(this.s[at + 3] ?? '');
  }
  private dash(): boolean {
    return this.ch() === '-' && this.sep(this.ch(1));
  }

  /** from anywhere on a line: to the first content of the next line that has any; sets `ind` */
  private nextLine(): void {
    for (;;) {
      const nl = this.s.indexOf('\n', this.i);
      if (nl < 0) {
        this.i = this.s.length;
        this.ind = -1;
        return;
      }
      this.i = nl + 1;
      while (this.ch() === ' ') this.i++;
      const ind = this.col();
      if (this.ch() === '\t') {
        this.spaces();
        if (!this.eol()) this.fail('tabs are not allowed as indentation');
      }
      if (this.eol()) continue;
      this.ind = this.marker() ? -1 : ind;
      return;
    }
  }

  /** after a value on its line: only a comment may follow */
  private endLine(): void {
    this.spaces();
    if (!this.eol()) this.fail('unexpected text after a value');
    this.nextLine();
  }

  document(): unknown {
    this.nextLine();
    let v: unknown = null;
    while (this.ch() === '%' && this.col() === 0) this.nextLine();
    if (this.ind === -1 && this.s.startsWith('---', this.i)) {
      this.i += 3;
      this.spaces();
      if (!this.eol()) v = this.node(-1, false);
      else this.nextLine();
    }
    if (this.ind !== -1) v = this.node(-1, false);
    if (this.i < this.s.length) {
      if (this.ind !== -1) this.fail('bad indentation');
      if (this.s.startsWith('...', this.i)) {
        this.i += 3;
        this.endLine();
      }
      if (this.i < this.s.length) this.fail('more than one document (the fleet reads one)');
    }
    return v;
  }

  /**
   * A node whose first content is at `i`. `parent` is the indentation of the enclosing block (-1 at the
   * top); `afterKey`: on a mapping key's line, where a block mapping may not start.
   */
  private node(parent: number, afterKey: boolean): unknown {
    const p = this.props();
    if ((p.tag !== undefined || p.anchor !== undefined) && this.eol()) {
      this.nextLine();
      const below = this.ind > parent || (this.ind === parent && afterKey && this.dash());
      return this.tagged(p, below ? this.node(parent, false) : null);
    }
    return this.tagged(p, this.bare(parent, afterKey));
  }

  private bare(parent: number, afterKey: boolean): unknown {
    const c = this.ch();
    this.raw = undefined;
    if (this.dash()) {
      if (afterKey) this.fail('a sequence cannot start on the line of its key');
      return this.blockSeq(this.col());
    }
    if (c === '?' && this.sep(this.ch(1))) this.fail('explicit "?" keys are not supported');
    if (c === '|' || c === '>') return this.blockScalar(parent);
    if (this.keyAhead()) {
      if (afterKey) this.fail('a mapping cannot start on the line of its key');
      return this.blockMap(this.col());
    }
    if (c === '*' || c === '[' || c === '{' || c === '"' || c === "'") {
      const v = this.flow();
      this.endLine();
      return v;
    }
    return this.plain(parent);
  }

  /** `&anchor` and `!tag`, in either order */
  private props(): { tag?: string; anchor?: string } {
    const p: { tag?: string; anchor?: string } = {};
    for (;;) {
      const c = this.ch();
      const name = c === '&' ? 'anchor' : 'tag';
      if ((c !== '&' && c !== '!') || p[name] !== undefined) return p;
      const start = this.i;
      while (!this.sep(this.ch()) && !FLOW_END.includes(this.ch())) this.i++;
      p[name] = this.s.slice(c === '&' ? start + 1 : start, this.i);
      this.spaces();
    }
  }

  private tagged(p: { tag?: string; anchor?: string }, v: unknown): unknown {
    if (p.tag !== undefined && (v === null || typeof v !== 'object')) {
      v = retag(p.tag, this.raw ?? String(v), v, (what) => this.fail(what));
    }
    if (p.anchor !== undefined) this.anchors.set(p.anchor, v);
    this.raw = undefined;
    return v;
  }

  private alias(): unknown {
    const start = ++this.i;
    while (!this.sep(this.ch()) && !FLOW_END.includes(this.ch())) this.i++;
    const name = this.s.slice(start, this.i);
    if (!this.anchors.has(name)) this.fail(`unknown alias *${name}`, start - 1);
    if (++this.aliases > 100) this.fail('more than 100 aliases');
    this.raw = undefined;
    return this.anchors.get(name);
  }

  /** whether the text at `i` is an implicit key (`key:` on this line) */
  private keyAhead(): boolean {
    const save = this.i;
    try {
      const c = this.ch();
      if (c === '"' || c === "'") this.quoted();
      else if ('[{*&!'.includes(c)) return false;
      else while (!this.eol() && !(this.ch() === ':' && this.sep(this.ch(1)))) this.i++;
      this.spaces();
      return this.ch() === ':' && this.sep(this.ch(1));
    } catch {
      return false;
    } finally {
      this.i = save;
    }
  }

  private blockMap(m: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let first = true; first || (this.ind === m && !this.dash()); first = false) {
      const at = this.i;
      let key: string;
      if (this.ch() === '"' || this.ch() === "'") key = this.quoted();
      else {
        while (!(this.ch() === ':' && this.sep(this.ch(1)))) {
          if (this.eol()) this.fail('expected a mapping key ("key: value")', at);
          this.i++;
        }
        key = keyOf(resolve(trim(this.s.slice(at, this.i))));
      }
      this.spaces();
      if (this.ch() !== ':') this.fail('expected ":" after a mapping key');
      this.i++;
      if (Object.hasOwn(out, key)) this.fail(`duplicate mapping key "${key}"`, at);
      this.spaces();
      let v: unknown = null;
      if (!this.eol()) v = this.node(m, true);
      else {
        this.nextLine();
        if (this.ind > m || (this.ind === m && this.dash())) v = this.node(m, false);
      }
      define(out, key, v);
      if (this.ind > m) this.fail('bad indentation of a mapping entry');
    }
    return out;
  }

  private blockSeq(s: number): unknown[] {
    const out: unknown[] = [];
    for (let first = true; first || (this.ind === s && this.dash()); first = false) {
      this.i++;
      this.spaces();
      if (!this.eol()) out.push(this.node(s, false));
      else {
        this.nextLine();
        out.push(this.ind > s ? this.node(s, false) : null);
      }
      if (this.ind > s) this.fail('bad indentation of a sequence item');
    }
    return out;
  }

  /** `|` or `>`, with chomping (`-`, `+`) and an indentation indicator, in either order */
  private blockScalar(parent: number): string {
    const folded = this.ch() === '>';
    this.i++;
    let chomp = '';
    let indent = -1;
    for (let k = 0; k < 2; k++) {
      const c = this.ch();
      if (c === '-' || c === '+') chomp = c;
      else if (c >= '1' && c <= '9') indent = Math.max(parent, 0) + Number(c);
      else break;
      this.i++;
    }
    this.spaces();
    if (!this.eol()) this.fail('unexpected text after a block scalar header');
    const { lines, end } = blockLines(this.s, this.i, parent, indent, (what, at) => this.fail(what, at));
    this.i = end;
    this.nextLine();
    return blockText(lines, folded, chomp);
  }

  /** a plain scalar in block context; continuation lines are indented deeper than `parent` */
  private plain(parent: number): unknown {
    const lines = [this.plainLine(this.i, 'a mapping cannot be a value on the line of its key')];
    while (this.ch() === '\n') {
      const { next, empties } = continuation(this.s, this.i, parent);
      if (next < 0) break;
      for (let k = 0; k < empties; k++) lines.push('');
      lines.push(this.plainLine(next, 'a mapping key cannot span lines'));
    }
    const text = fold(lines);
    this.raw = text;
    this.endLine();
    return resolve(text);
  }

  /** one line of a plain scalar, from `at` to a comment or the line's end */
  private plainLine(at: number, nested: string): string {
    this.i = at;
    while (!this.eol()) {
      if (this.ch() === ':' && this.sep(this.ch(1))) this.fail(nested);
      this.i++;
    }
    return trim(this.s.slice(at, this.i));
  }

  /** a quoted scalar at `i`, single or double, folded across lines */
  private quoted(): string {
    const r = readQuoted(this.s, this.i, (what, at) => this.fail(what, at));
    this.i = r.end;
    return r.text;
  }

  // ---- flow context ----

  private fspace(): void {
    for (;;) {
      const c = this.ch();
      if (c === ' ' || c === '\t' || c === '\n') this.i++;
      else if (c === '#' && this.sep(this.s[this.i - 1]!)) {
        const nl = this.s.indexOf('\n', this.i);
        this.i = nl < 0 ? this.s.length : nl;
      } else return;
    }
  }

  private flow(): unknown {
    const p = this.props();
    const c = this.ch();
    let v: unknown;
    this.raw = undefined;
    if (c === '[' || c === '{') {
      this.i++;
      const close = c === '[' ? ']' : '}';
      const seq: unknown[] = [];
      const map: Record<string, unknown> = {};
      for (;;) {
        this.fspace();
        if (this.ch() === close) break;
        if (this.ch() === '' || ',]}'.includes(this.ch())) this.fail(`expected a value or "${close}"`);
        const at = this.i;
        const k = this.flow();
        this.fspace();
        let val: unknown = null;
        const pair = this.ch() === ':';
        if (pair) {
          this.i++;
          this.fspace();
          if (this.ch() !== ',' && this.ch() !== close) val = this.flow();
          this.fspace();
        }
        if (c === '{') {
          const key = keyOf(k);
          if (Object.hasOwn(map, key)) this.fail(`duplicate mapping key "${key}"`, at);
          define(map, key, val);
        } else seq.push(pair ? define({}, keyOf(k), val) : k);
        if (this.ch() === ',') this.i++;
        else if (this.ch() !== close) this.fail(`expected "," or "${close}"`);
      }
      this.i++;
      v = c === '[' ? seq : map;
    } else if (c === '*') v = this.alias();
    else if (c === '"' || c === "'") v = this.raw = this.quoted();
    else {
      const start = this.i;
      while (
        this.ch() !== '' &&
        !FLOW_END.includes(this.ch()) &&
        !(this.ch() === ':' && (this.sep(this.ch(1)) || FLOW_END.includes(this.ch(1)))) &&
        !(this.ch() === '#' && this.sep(this.s[this.i - 1]!))
      )
        this.i++;
      this.raw = fold(trim(this.s.slice(start, this.i)).split('\n').map(trim));
      v = resolve(this.raw);
    }
    return this.tagged(p, v);
  }
}

/** Reads one YAML (or JSON) document. Throws YamlError naming the line and column of a problem. */
export function parseYaml(text: string): unknown {
  const s = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const t = /^[ \t\n]*(.)/.exec(s)?.[1];
  if (t === '{' || t === '[') {
    try {
      return JSON.parse(s);
    } catch {
      // YAML's flow style, not JSON
    }
  }
  return new Reader(s).document();
}
