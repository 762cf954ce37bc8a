/**
 * The grammar of the simulated containers' shell (shell.ts runs what this parses): tokens, words with
 * their quoting and expansions, and the command tree. Pure.
 */

// ---------------------------------------------------------------------------------------------- lexer

export type Part =
  | { t: 'lit'; v: string; quoted: boolean }
  | { t: 'var'; name: string; quoted: boolean }
  | { t: 'sub'; src: string; quoted: boolean };
export interface Word {
  parts: Part[];
}
export type Tok = { k: 'word'; w: Word; raw: string } | { k: 'op'; v: string } | { k: 'nl' } | { k: 'end' };

export class ShellSyntaxError extends Error {}

const OPS = ['&&', '||', '>>', '>&', ';;', ';', '&', '|', '>', '<', '(', ')'];

/** Tokens of a whole script. `raw` is the word as written (for reserved words and assignments). */
export function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '\\' && src[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '\n') {
      out.push({ k: 'nl' });
      i++;
      continue;
    }
    if (c === '#') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    // a digit right before > is a file descriptor, as in 2>&1 (kept as part of the operator)
    if (/[0-9]/.test(c) && (src[i + 1] === '>' || (src[i + 1] === '>' && src[i + 2] === '&'))) {
      const op = src.startsWith('>>', i + 1) ? '>>' : src.startsWith('>&', i + 1) ? '>&' : '>';
      out.push({ k: 'op', v: `${c}${op}` });
      i += 1 + op.length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (op) {
      out.push({ k: 'op', v: op });
      i += op.length;
      continue;
    }
    const start = i;
    const [w, next] = readWord(src, i);
    out.push({ k: 'word', w, raw: src.slice(start, next) });
    i = next;
  }
  out.push({ k: 'end' });
  return out;
}

export function readWord(src: string, i: number): [Word, number] {
  const parts: Part[] = [];
  const lit = (v: string, quoted: boolean) => {
    const last = parts[parts.length - 1];
    if (last?.t === 'lit' && last.quoted === quoted) last.v += v;
    else parts.push({ t: 'lit', v, quoted });
  };
  while (i < src.length) {
    const c = src[i]!;
    if (' \t\r\n;&|<>()'.includes(c)) break;
    if (c === '\\') {
      if (i + 1 < src.length) lit(src[i + 1]!, true);
      i += 2;
    } else if (c === "'") {
      const end = src.indexOf("'", i + 1);
      if (end < 0) throw new ShellSyntaxError('unterminated quoted string');
      lit(src.slice(i + 1, end), true);
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < src.length) {
        const d = src[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === '\\' && '$`"\\\n'.includes(src[i + 1] ?? '')) {
          if (src[i + 1] !== '\n') lit(src[i + 1]!, true);
          i += 2;
        } else if (d === '$') {
          i = readDollar(src, i, parts, true, lit);
        } else {
          lit(d, true);
          i++;
        }
      }
      if (!closed) throw new ShellSyntaxError('unterminated quoted string');
      if (parts.length === 0) lit('', true);
    } else if (c === '$') {
      i = readDollar(src, i, parts, false, lit);
    } else {
      lit(c, false);
      i++;
    }
  }
  return [{ parts }, i];
}

function readDollar(
  src: string,
  i: number,
  parts: Part[],
  quoted: boolean,
  lit: (v: string, q: boolean) => void,
): number {
  const n = src[i + 1];
  if (n === '(') {
    // $( … ) with nesting and quotes skipped over
    let depth = 1;
    let j = i + 2;
    while (j < src.length && depth > 0) {
      const c = src[j]!;
      if (c === "'") j = src.indexOf("'", j + 1);
      else if (c === '(') depth++;
      else if (c === ')') depth--;
      if (j < 0) break;
      j++;
    }
    if (depth !== 0 || j < 0) throw new ShellSyntaxError("unterminated command substitution, expected ')'");
    parts.push({ t: 'sub', src: src.slice(i + 2, j - 1), quoted });
    return j;
  }
  if (n === '{') {
    const end = src.indexOf('}', i + 2);
    if (end < 0) throw new ShellSyntaxError('bad substitution');
    parts.push({ t: 'var', name: src.slice(i + 2, end), quoted });
    return end + 1;
  }
  const m = /^([A-Za-z_][A-Za-z0-9_]*|[0-9?#$!@*])/.exec(src.slice(i + 1));
  if (!m) {
    lit('$', quoted);
    return i + 1;
  }
  parts.push({ t: 'var', name: m[1]!, quoted });
  return i + 1 + m[1]!.length;
}

// ---------------------------------------------------------------------------------------------- parser

export interface Redir {
  fd: number;
  op: '>' | '>>' | '<' | '>&';
  target: Word;
}
export type Cmd =
  | { t: 'simple'; assigns: [string, Word][]; words: Word[]; redirs: Redir[] }
  | { t: 'for'; name: string; items: Word[]; body: List }
  | { t: 'if'; cond: List; then: List; else?: List }
  | { t: 'group'; body: List };
export interface Pipeline {
  negate: boolean;
  cmds: Cmd[];
}
export interface AndOr {
  first: Pipeline;
  rest: ['&&' | '||', Pipeline][];
}
export type List = AndOr[];

const RESERVED = new Set(['do', 'done', 'then', 'else', 'elif', 'fi', '}', 'in']);

class Parser {
  private at = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok {
    return this.toks[this.at]!;
  }
  private isWord(raw: string): boolean {
    const t = this.peek();
    return t.k === 'word' && t.raw === raw;
  }
  private expectWord(raw: string): void {
    if (!this.isWord(raw))
      throw new ShellSyntaxError(`syntax error: unexpected ${describe(this.peek())} (expecting "${raw}")`);
    this.at++;
  }
  private skipNewlines(): void {
    while (this.peek().k === 'nl') this.at++;
  }

  script(): List {
    const l = this.list(new Set());
    if (this.peek().k !== 'end')
      throw new ShellSyntaxError(`syntax error: unexpected ${describe(this.peek())}`);
    return l;
  }

  /** and_or items until a reserved word of `stops` (not consumed) or the end. */
  private list(stops: Set<string>): List {
    const items: List = [];
    while (true) {
      this.skipNewlines();
      const t = this.peek();
      if (t.k === 'end' || (t.k === 'word' && stops.has(t.raw)) || (t.k === 'op' && t.v === ')'))
        return items;
      items.push(this.andOr());
      const sep = this.peek();
      if (sep.k === 'op' && (sep.v === ';' || sep.v === '&')) this.at++;
      else if (sep.k !== 'nl' && sep.k !== 'end' && !(sep.k === 'word' && stops.has(sep.raw)))
        throw new ShellSyntaxError(`syntax error: unexpected ${describe(sep)}`);
    }
  }

  private andOr(): AndOr {
    const first = this.pipeline();
    const rest: AndOr['rest'] = [];
    while (true) {
      const t = this.peek();
      if (t.k !== 'op' || (t.v !== '&&' && t.v !== '||')) return { first, rest };
      this.at++;
      this.skipNewlines();
      rest.push([t.v, this.pipeline()]);
    }
  }

  private pipeline(): Pipeline {
    let negate = false;
    if (this.isWord('!')) {
      negate = true;
      this.at++;
    }
    const cmds = [this.command()];
    while (this.peek().k === 'op' && (this.peek() as { v: string }).v === '|') {
      this.at++;
      this.skipNewlines();
      cmds.push(this.command());
    }
    return { negate, cmds };
  }

  private command(): Cmd {
    const t = this.peek();
    if (t.k === 'word' && t.raw === 'for') return this.forCmd();
    if (t.k === 'word' && t.raw === 'if') return this.ifCmd();
    if (t.k === 'word' && t.raw === '{') {
      this.at++;
      const body = this.list(new Set(['}']));
      this.expectWord('}');
      return { t: 'group', body };
    }
    return this.simple();
  }

  private forCmd(): Cmd {
    this.at++;
    const nameTok = this.peek();
    if (nameTok.k !== 'word' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(nameTok.raw))
      throw new ShellSyntaxError(`syntax error: bad for loop variable`);
    this.at++;
    const items: Word[] = [];
    if (this.isWord('in')) {
      this.at++;
      while (this.peek().k === 'word') items.push((this.toks[this.at++] as { w: Word }).w);
    }
    const sep = this.peek();
    if (sep.k === 'op' && sep.v === ';') this.at++;
    this.skipNewlines();
    this.expectWord('do');
    const body = this.list(new Set(['done']));
    this.expectWord('done');
    return { t: 'for', name: nameTok.raw, items, body };
  }

  private ifCmd(): Cmd {
    this.at++;
    const cond = this.list(new Set(['then']));
    this.expectWord('then');
    const then = this.list(new Set(['else', 'elif', 'fi']));
    let otherwise: List | undefined;
    if (this.isWord('elif')) {
      // elif is an if nested in the else branch
      const nested = this.ifCmd();
      return { t: 'if', cond, then, else: [{ first: { negate: false, cmds: [nested] }, rest: [] }] };
    }
    if (this.isWord('else')) {
      this.at++;
      otherwise = this.list(new Set(['fi']));
    }
    this.expectWord('fi');
    return otherwise ? { t: 'if', cond, then, else: otherwise } : { t: 'if', cond, then };
  }

  private simple(): Cmd {
    const assigns: [string, Word][] = [];
    const words: Word[] = [];
    const redirs: Redir[] = [];
    while (true) {
      const t = this.peek();
      if (t.k === 'word') {
        if (words.length === 0 && RESERVED.has(t.raw)) break;
        const eq = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(t.raw);
        if (words.length === 0 && eq) {
          const [w] = readWord(t.raw, eq[0].length);
          assigns.push([eq[1]!, w]);
        } else words.push(t.w);
        this.at++;
        continue;
      }
      if (t.k === 'op' && /^[0-9]?(>|>>|>&)$|^<$/.test(t.v)) {
        this.at++;
        const target = this.peek();
        if (target.k !== 'word') throw new ShellSyntaxError(`syntax error: unexpected ${describe(target)}`);
        this.at++;
        const fd = /^[0-9]/.test(t.v) ? Number(t.v[0]) : t.v === '<' ? 0 : 1;
        redirs.push({ fd, op: t.v.replace(/^[0-9]/, '') as Redir['op'], target: target.w });
        continue;
      }
      break;
    }
    if (words.length === 0 && assigns.length === 0 && redirs.length === 0)
      throw new ShellSyntaxError(`syntax error: unexpected ${describe(this.peek())}`);
    return { t: 'simple', assigns, words, redirs };
  }
}

function describe(t: Tok): string {
  if (t.k === 'end') return 'end of file';
  if (t.k === 'nl') return 'newline';
  if (t.k === 'op') return `"${t.v}"`;
  return `"${t.raw}"`;
}

export function parse(src: string): List {
  return new Parser(lex(src)).script();
}
