/**
 * Size rules for the shipped code (src/, tests aside): no file over 400 lines but data tables, no function
 * over 120 lines but the list splitter's byte scanner, whose one loop over a chunk is the hot path and
 * reads best whole (a state machine split across calls costs a call per byte).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionSizes } from './functions.ts';
import { isTestFile, listSources, ROOT } from './graph.ts';

const FILE_LIMIT = 400;
const FUNCTION_LIMIT = 120;

/**
 * Files in src/ that are data tables (rows of constants, not logic) and may be longer. None today: the
 * tables the simulator needs live in sim/catalog/, outside these rules. Add one only for a file whose
 * bulk is literal data, never for code that has not been split yet.
 */
const DATA_TABLES: Record<string, string> = {};

/** `file#function` allowed past the function limit, and why. */
const LONG_FUNCTIONS: Record<string, string> = {
  'src/merge/jsonsplit.ts#ListSplitter.scan':
    'the byte scanner: one tight loop over a chunk, every state inline (see the file header)',
};

const SRC = listSources(['src']).filter((f) => !isTestFile(f) && !f.endsWith('.d.ts'));
const text = (f: string) => readFileSync(join(ROOT, f), 'utf8');
const lineCount = (t: string) => t.split('\n').length - (t.endsWith('\n') ? 1 : 0);

describe('the function measure', () => {
  it('names and measures functions, methods and closures, closures inside their function', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const src = [
      'export function outer() {', // 1
      '  const inner = () => {', // 2
      body(3), // 3-5
      '  };', // 6
      '  return inner;', // 7
      '}', // 8
      'class Splitter {', // 9
      '  private scan(chunk: Uint8Array): void {', // 10
      body(2), // 11-12
      '  }', // 13
      '}', // 14
      'const handlers = { get(x: number) { return x; } };', // 15
      '[1].map(function (x) { return x; });', // 16
    ].join('\n');
    expect(functionSizes('t.ts', src)).toEqual([
      { name: 'outer', line: 1, lines: 8 },
      { name: 'outer/inner', line: 2, lines: 5 },
      { name: 'Splitter.scan', line: 10, lines: 4 },
      { name: 'get', line: 15, lines: 1 },
      { name: '(anonymous)', line: 16, lines: 1 },
    ]);
  });

  it('would catch a function one line over the limit', () => {
    const long = `function long() {\n${'  void 0;\n'.repeat(FUNCTION_LIMIT - 1)}}\n`;
    expect(functionSizes('t.ts', long)).toEqual([{ name: 'long', line: 1, lines: FUNCTION_LIMIT + 1 }]);
  });

  it('every exemption still names a real function (a stale one would hide a new long function)', () => {
    for (const key of Object.keys(LONG_FUNCTIONS)) {
      const [file, name] = key.split('#') as [string, string];
      expect(
        functionSizes(file, text(file)).map((f) => f.name),
        key,
      ).toContain(name);
    }
    for (const file of Object.keys(DATA_TABLES)) expect(SRC).toContain(file);
  });
});

describe('sizes in src/', () => {
  it(`no file over ${FILE_LIMIT} lines but data tables`, () => {
    const over = SRC.map((f) => ({ f, n: lineCount(text(f)) }))
      .filter(({ f, n }) => n > FILE_LIMIT && !(f in DATA_TABLES))
      .map(({ f, n }) => `${f}: ${n} lines`);
    expect(over).toEqual([]);
  });

  it(`no function over ${FUNCTION_LIMIT} lines but the byte scanner`, () => {
    const over = SRC.flatMap((f) =>
      functionSizes(f, text(f))
        .filter((fn) => fn.lines > FUNCTION_LIMIT && !(`${f}#${fn.name}` in LONG_FUNCTIONS))
        .map((fn) => `${f}:${fn.line} ${fn.name}: ${fn.lines} lines`),
    );
    expect(over).toEqual([]);
  });
});
