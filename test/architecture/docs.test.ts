/**
 * docs/architecture.md against the code: every name it writes in backticks that looks like a path of
 * the tree (`src/app.ts`, `routes/get.ts`, `upstreams/relay/`) or like an exported symbol (`createApp`,
 * `installNodeHooks`, `Filter`, `ListSplitter.scan`) must exist, so the page cannot go on describing a
 * file or a function that was renamed or removed. Names of other projects (kube-apiserver's Go names)
 * are listed below as such. Lowercase single words (`limits`, `all`) are not checked: they are folder
 * names and plain words as often as code.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listSources, ROOT } from './graph.ts';

/** Names the page cites from Kubernetes, client-go, the runtimes and libraries, not from this tree. */
const ELSEWHERE = new Set([
  // kube-apiserver, client-go
  'DefaultBuildHandlerChain',
  'WithPanicRecovery',
  'IsValidPathSegmentName',
  'clientcmd.Validate',
  // Hono, undici, workerd; the product brief of the planning repo
  'onError',
  'Agent',
  'WebSocketPair',
  'DESIGN.md',
]);

/** the folders a short path may be written from (`routes/get.ts` is `src/routes/get.ts`) */
const BASES = ['', 'src/'];

const PATH = /^[\w.-]+(\/[\w.-]+)*\/?$/;
const SYMBOL = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)?$/;

interface DocNames {
  paths: string[];
  symbols: string[];
}

/** The backticked names of a Markdown text that look like tree paths or exported symbols. */
function docNames(markdown: string): DocNames {
  const paths = new Set<string>();
  const symbols = new Set<string>();
  // code blocks hold commands and examples, not references
  const text = markdown.replace(/```[\s\S]*?```/g, '');
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    const span = m[1]!.trim();
    if (span.includes('/') && PATH.test(span) && /\.(ts|mjs|md|toml|json)$|\/$/.test(span)) paths.add(span);
    else if (
      SYMBOL.test(span) &&
      /[A-Z]/.test(span.replace(/^[A-Z_]+$/, (s) => (s.includes('_') ? 'A' : '')))
    )
      symbols.add(span);
  }
  return { paths: [...paths].sort(), symbols: [...symbols].sort() };
}

/** Every exported name of the tree's production and test files (functions, classes, types, constants). */
function exportedNames(files: string[], read: (f: string) => string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (name: string, file: string) => out.set(name, [...(out.get(name) ?? []), file]);
  for (const f of files) {
    const text = read(f);
    for (const m of text.matchAll(
      /export\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|const|let|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g,
    ))
      add(m[1]!, f);
    for (const m of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g))
      for (const part of m[1]!.split(',')) {
        const name = part
          .trim()
          .split(/\s+as\s+/)
          .pop()
          ?.replace(/^type\s+/, '');
        if (name) add(name, f);
      }
  }
  return out;
}

/** What the page names that the tree does not have. */
function missingNames(
  names: DocNames,
  exported: Map<string, string[]>,
  exists: (p: string) => boolean,
  read: (f: string) => string,
): string[] {
  const missing: string[] = [];
  for (const p of names.paths) if (!BASES.some((b) => exists(b + p.replace(/\/$/, '')))) missing.push(p);
  for (const s of names.symbols) {
    if (ELSEWHERE.has(s)) continue;
    const [owner, member] = s.split('.') as [string, string | undefined];
    const files = exported.get(owner);
    if (!files) {
      // a member of an exported interface (`Platform`'s `checkEndpoint`) or a binding of wrangler.toml
      if (!member && memberOrBinding(owner, read)) continue;
      missing.push(s);
    }
    // `Class.method`: the member is written in the class's file
    else if (member && !files.some((f) => new RegExp(`\\b${member}\\s*[(<:=]`).test(read(f))))
      missing.push(s);
  }
  return missing;
}

/** A step of a path diagram: `─▶ src/list/plan.ts  planList()`, the file entered and the name entered by. */
interface Step {
  file: string;
  name: string;
}

/** The path sections (from `## The path` to the next `## `): their diagrams' paths and steps. */
function pathDiagrams(markdown: string): { paths: string[]; diagrams: Step[][] } {
  const section = markdown.match(/^## The path[^\n]*\n([\s\S]*?)(?=^## )/m)?.[1] ?? '';
  const paths = new Set<string>();
  const diagrams: Step[][] = [];
  for (const block of section.matchAll(/```[^\n]*\n([\s\S]*?)```/g)) {
    const steps: Step[] = [];
    for (const line of block[1]!.split('\n')) {
      for (const m of line.matchAll(/\b(?:src|deploy)\/[\w.-]+(?:\/[\w-]+(?:\.[\w-]+)*)*\/?/g))
        paths.add(m[0]);
      const step = line.match(/─▶ (src\/[\w./-]+\.ts)\s+([A-Za-z_$][\w$]*)(?:\(\))?/);
      if (step) steps.push({ file: step[1]!, name: step[2]! });
    }
    if (steps.length) diagrams.push(steps);
  }
  return { paths: [...paths].sort(), diagrams };
}

/** What a diagram gets wrong: a step's name not exported by its file, a file entered twice, more than 8. */
function diagramFaults(steps: Step[], exported: Map<string, string[]>): string[] {
  const faults: string[] = [];
  for (const s of steps)
    if (!(exported.get(s.name) ?? []).includes(s.file)) faults.push(`${s.file} does not export ${s.name}`);
  const files = steps.map((s) => s.file);
  for (const f of new Set(files.filter((f, i) => files.indexOf(f) !== i))) faults.push(`${f} entered twice`);
  if (files.length > MAX_STEPS) faults.push(`${files.length} files, more than ${MAX_STEPS}`);
  return faults;
}

/** issue 31: a merged list (and a merged watch) reads from its route in at most this many files */
const MAX_STEPS = 8;

const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const FILES = listSources(['src', 'deploy', 'test', 'sim', 'bench', 'scripts']);
const SRC = FILES.filter((f) => f.startsWith('src/'));
/** a file, or a folder of the tree written by its own name (`cache/` beside `upstreams/`) */
const exists = (p: string) =>
  existsSync(join(ROOT, p)) || (!p.includes('/') && SRC.some((f) => f.includes(`/${p}/`)));

function memberOrBinding(name: string, read: (f: string) => string): boolean {
  if (/^[A-Z][A-Z0-9_]+$/.test(name) && new RegExp(`\\b${name}\\b`).test(read('wrangler.toml'))) return true;
  const declared = new RegExp(`^\\s+(readonly\\s+)?${name}\\??\\s*[:(]`, 'm');
  return SRC.some((f) => declared.test(read(f)));
}

describe('docs/architecture.md names what exists', () => {
  const page = read('docs/architecture.md');
  const names = docNames(page);
  const exported = exportedNames(FILES, read);

  it('reads paths and symbols from backticks, and reports ones that do not exist', () => {
    const probe = docNames(
      'The `src/app.ts` root, `routes/get.ts`, `upstreams/relay/`, `createApp`, `Filter`, `FleetRelay`, ' +
        '`ListSplitter.scan`, `DIRECT_RELAY`, `limits`, `all`, `kubectl --as`, `src/nope.ts`, `noSuchExport`, ' +
        '`ListSplitter.noSuchMethod`\n```\nnpx vitest run `src/ignored.ts`\n```',
    );
    expect(probe).toEqual({
      paths: ['routes/get.ts', 'src/app.ts', 'src/nope.ts', 'upstreams/relay/'],
      symbols: [
        'DIRECT_RELAY',
        'Filter',
        'FleetRelay',
        'ListSplitter.noSuchMethod',
        'ListSplitter.scan',
        'createApp',
        'noSuchExport',
      ],
    });
    expect(missingNames(probe, exported, exists, read)).toEqual([
      'src/nope.ts',
      'ListSplitter.noSuchMethod',
      'noSuchExport',
    ]);
  });

  it('every path and exported symbol it names exists', () => {
    expect(names.paths.length + names.symbols.length).toBeGreaterThan(40);
    expect(missingNames(names, exported, exists, read)).toEqual([]);
  });

  it('reads the path diagrams: every path, and each step as a file and the name it is entered by', () => {
    const probe = pathDiagrams(
      '## The path of one request\n```\nentry ─▶ src/app.ts (Hono)\n  ─▶ src/list/route.ts  listRoute()  thin\n' +
        '  ─▶ src/list/plan.ts   planList()   pure (merge/rv/)\n  ─▶ src/list/plan.ts   noSuchStep\n```\n' +
        '## Folders\n```\n  ─▶ src/elsewhere.ts  notRead()\n```\n',
    );
    expect(probe.paths).toEqual(['src/app.ts', 'src/list/plan.ts', 'src/list/route.ts']);
    expect(diagramFaults(probe.diagrams[0]!, exported)).toEqual([
      'src/list/plan.ts does not export noSuchStep',
      'src/list/plan.ts entered twice',
    ]);
  });

  it('the path of a list and of a watch: every file exists, every step is entered by a name its file exports', () => {
    const { paths, diagrams } = pathDiagrams(page);
    expect(paths.filter((p) => !exists(p.replace(/\/$/, '')))).toEqual([]);
    // the list's and the watch's
    expect(diagrams.length).toBe(2);
    for (const steps of diagrams) expect(diagramFaults(steps, exported)).toEqual([]);
  });
});
