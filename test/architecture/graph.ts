/**
 * The project's import graph, read from a real TypeScript parse (oxc-parser: typescript 7 is the native
 * compiler and has no JS API) and resolved file by file, the way Node and esbuild resolve this tree's
 * specifiers (relative, with their `.ts` extension). The folder rules (rules.ts) and the cycle check run
 * over it; both take the files' text through `read`, so a test can swap one file's text for a
 * deliberately wrong one without touching the tree.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, sep } from 'node:path';
import { parseSync } from 'oxc-parser';

export const ROOT = join(import.meta.dirname, '..', '..');

/** One import, export-from or dynamic import() in a file. */
export interface ImportEdge {
  /** repo-relative path of the importing file, `/`-separated */
  from: string;
  /** the specifier as written */
  specifier: string;
  /** a repo-relative file, a package name (`node:fs`, `hono`, `@hono/node-server`), or unresolved */
  target: { kind: 'file'; path: string } | { kind: 'package'; name: string } | { kind: 'unresolved' };
  /** erased at run time (`import type`, or every name imported is `type`) */
  typeOnly: boolean;
  /** an import() of a computed path: cannot be resolved statically */
  computed?: boolean;
  line: number;
}

export interface Graph {
  files: string[];
  edges: ImportEdge[];
  /** files the parser refused, with its first message: a rule must not pass because a file went unread */
  parseErrors: { file: string; message: string }[];
}

const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Every source file under the given top-level folders, repo-relative and sorted. */
export function listSources(dirs: string[], root = ROOT): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    for (const name of readdirSync(abs)) {
      if (name === 'node_modules' || name.startsWith('.')) continue;
      const p = join(abs, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (SOURCE.test(name)) out.push(relative(root, p).split(sep).join('/'));
    }
  };
  for (const d of dirs) if (existsSync(join(root, d))) walk(join(root, d));
  return out.sort();
}

export function isTestFile(path: string): boolean {
  return /\.test\.[cm]?[jt]s$/.test(path) || path.startsWith('test/');
}

/** Line starts of a text, for turning parser offsets into 1-based line numbers. */
export function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`, `node:fs/promises` → `node:fs`. */
export function packageName(spec: string): string {
  if (spec.startsWith('node:')) return spec.split('/')[0]!;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/**
 * Resolve a relative specifier to a repo-relative file. This tree writes `.ts` extensions; a `.js`
 * specifier naming a `.ts` file (the NodeNext convention), an extension-less one and a folder's
 * `index.ts` are accepted too so that no way of writing an import slips past the rules.
 */
export function resolveRelative(
  from: string,
  spec: string,
  exists: (p: string) => boolean,
): string | undefined {
  const base = posix.normalize(posix.join(posix.dirname(from), spec));
  const candidates = [base, base.replace(/\.([cm]?)js$/, '.$1ts'), `${base}.ts`, `${base}/index.ts`];
  return candidates.find((c) => !c.startsWith('..') && exists(c));
}

export interface ReadOptions {
  root?: string;
  /** replace a file's text (the self-test's deliberately wrong imports); a path may also be new */
  overrides?: Record<string, string>;
}

export function buildGraph(files: string[], opts: ReadOptions = {}): Graph {
  const root = opts.root ?? ROOT;
  const overrides = opts.overrides ?? {};
  const all = [...new Set([...files, ...Object.keys(overrides)])].sort();
  const known = new Set(all);
  const exists = (p: string) => known.has(p) || existsSync(join(root, p));
  const edges: ImportEdge[] = [];
  const parseErrors: Graph['parseErrors'] = [];
  for (const file of all) {
    const text = overrides[file] ?? readFileSync(join(root, file), 'utf8');
    const parsed = parseSync(file, text, { lang: file.endsWith('.ts') ? 'ts' : 'js', sourceType: 'module' });
    if (parsed.errors.length) {
      parseErrors.push({ file, message: parsed.errors[0]!.message });
      continue;
    }
    const lineOf = lineIndex(text);
    const add = (specifier: string, typeOnly: boolean, offset: number) => {
      let target: ImportEdge['target'];
      if (specifier.startsWith('.')) {
        const path = resolveRelative(file, specifier, exists);
        target = path ? { kind: 'file', path } : { kind: 'unresolved' };
      } else if (specifier.startsWith('/')) {
        target = { kind: 'unresolved' };
      } else {
        target = { kind: 'package', name: packageName(specifier) };
      }
      edges.push({ from: file, specifier, target, typeOnly, line: lineOf(offset) });
    };
    const mod = parsed.module;
    for (const imp of mod.staticImports) {
      // `import './x'` has no entries and runs the module: not type-only
      const typeOnly = imp.entries.length > 0 && imp.entries.every((e) => e.isType);
      add(imp.moduleRequest.value, typeOnly, imp.start);
    }
    for (const exp of mod.staticExports) {
      for (const e of exp.entries) if (e.moduleRequest) add(e.moduleRequest.value, e.isType, exp.start);
    }
    for (const dyn of mod.dynamicImports) {
      const arg = text.slice(dyn.moduleRequest.start, dyn.moduleRequest.end).trim();
      const lit = /^(['"`])([^'"`$]*)\1$/.exec(arg);
      // a computed import() cannot be checked statically: production code must not have one (the
      // rules test fails on it rather than pretend it is fine)
      if (lit) add(lit[2]!, false, dyn.start);
      else
        edges.push({
          from: file,
          specifier: arg,
          target: { kind: 'unresolved' },
          typeOnly: false,
          computed: true,
          line: lineOf(dyn.start),
        });
    }
    // types written as `typeof import('./x.ts').name` or `import('hono').Context`: erased at run time,
    // but the file's design depends on the other's as much as through `import type`
    if (text.includes('import(')) {
      walk(parsed.program, (node) => {
        if (node.type === 'TSImportType' && typeof node.source?.value === 'string')
          add(node.source.value, true, node.start);
      });
    }
  }
  return { files: all, edges, parseErrors };
}

interface AstNode {
  type: string;
  start: number;
  source?: { value?: unknown };
}

/** Every node of an ESTree-shaped tree, depth first. */
function walk(node: unknown, visit: (n: AstNode) => void): void {
  if (Array.isArray(node)) {
    for (const n of node) walk(n, visit);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  if (typeof (node as AstNode).type === 'string') visit(node as AstNode);
  for (const [k, v] of Object.entries(node)) if (k !== 'parent' && v && typeof v === 'object') walk(v, visit);
}

/** Whether a repo-relative path is in a folder (`src/merge/`) or is a file (`src/types.ts`). */
export function under(path: string, prefix: string): boolean {
  return prefix.endsWith('/') ? path.startsWith(prefix) : path === prefix;
}

/**
 * Strongly connected components of the file graph (Tarjan), each a set of files that import each other
 * round in a circle; a file importing itself counts. Returns one concrete circle per component too, so a
 * failure names the path to cut.
 */
export function findCycles(files: string[], edges: { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const f of files) next.set(f, []);
  for (const e of edges) if (next.has(e.from) && next.has(e.to)) next.get(e.from)!.push(e.to);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  // iterative: a deep import chain must not overflow the stack
  for (const start of files) {
    if (index.has(start)) continue;
    const work: { v: string; i: number }[] = [{ v: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1]!;
      const succ = next.get(top.v)!;
      if (top.i < succ.length) {
        const w = succ[top.i++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!.v;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.v)!));
      }
      if (low.get(top.v) === index.get(top.v)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.v);
        if (comp.length > 1 || next.get(top.v)!.includes(top.v)) components.push(comp.sort());
      }
    }
  }
  return components.map((comp) => circleWithin(comp, next));
}

/** A shortest circle through the first file of a component, staying inside it (breadth-first). */
function circleWithin(comp: string[], next: Map<string, string[]>): string[] {
  const inside = new Set(comp);
  const start = comp[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of next.get(v)!) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [v];
        while (path[0] !== start) path.unshift(prev.get(path[0]!)!);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return comp;
}

export function dirOf(path: string): string {
  return `${dirname(path)}/`;
}
