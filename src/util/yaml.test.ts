/**
 * The fleet's YAML reading (js-yaml, bounded) against the `yaml` package as the oracle: random documents
 * written in each of its output styles read back the same through both; real documents (every YAML file of
 * this repository, kubeconfigs) read the same; what `yaml` refuses is refused too; the bounds hold.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Y from 'yaml';
import { parseYaml, YamlError } from './yaml.ts';

const oracle = (text: string) => Y.parse(text, { logLevel: 'error' } as never) as unknown;

/** what one reading gives: the value, or that it was refused */
function outcome(f: () => unknown): { ok: true; v: unknown } | { ok: false } {
  try {
    return { ok: true, v: f() };
  } catch {
    return { ok: false };
  }
}

/** strings that exercise the scalar rules: schema look-alikes, indicators, escapes, unicode, breaks */
const tricky = fc.oneof(
  fc.constantFrom(
    'true',
    'False',
    'null',
    '~',
    '',
    ' ',
    '1',
    '-0',
    '0o17',
    '0x1F',
    '1e3',
    '.inf',
    '1_000',
    'yes',
    'a: b',
    'a #b',
    '#x',
    '- x',
    '? x',
    '[a]',
    '{a}',
    '*a',
    '&a',
    '!a',
    '|',
    '>',
    "'q'",
    '"q"',
    '@x',
    '%x',
    '---',
    '...',
    ' lead',
    'trail ',
    'tab\there',
    'a\nb',
    'a\n\nb',
    'x\n',
    '\n\nx\n\n',
    '  indented\nnot',
    'é ü 日本 🙂',
    '\u2028 \u0085 \x7f \x01',
    'back\\slash "quote"',
    'http://x:80/y#z',
  ),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({
    unit: fc.constantFrom('a', ' ', '\n', ':', '#', '-', "'", '"', '\\', '\t', 'é'),
    maxLength: 16,
  }),
  // long enough to be folded at the narrower line widths
  fc
    .array(fc.constantFrom('word', 'a', ' ', '  ', '\n', '\t', 'longerword', '#', ': '), { maxLength: 30 })
    .map((xs) => xs.join('')),
);

const key = fc.oneof(
  tricky,
  fc.constantFrom('apiVersion', 'kind', 'metadata', 'name', '__proto__', '1', 'true'),
);
const scalar = fc.oneof(
  tricky,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(key, tie('v'), { maxKeys: 4 }),
  ),
})).v;

/** the `yaml` package's output styles */
const style = fc.record({
  indent: fc.constantFrom(2, 4),
  indentSeq: fc.boolean(),
  lineWidth: fc.constantFrom(0, 20, 80),
  minContentWidth: fc.constantFrom(0, 10),
  blockQuote: fc.constantFrom(true, false, 'literal', 'folded'),
  defaultStringType: fc.constantFrom(
    'PLAIN',
    'QUOTE_DOUBLE',
    'QUOTE_SINGLE',
    'BLOCK_LITERAL',
    'BLOCK_FOLDED',
  ),
  defaultKeyType: fc.constantFrom(null, 'PLAIN', 'QUOTE_DOUBLE'),
  collectionStyle: fc.constantFrom('any', 'block', 'flow'),
  doubleQuotedAsJSON: fc.boolean(),
});

describe('parseYaml reads what the yaml package writes, as it reads it', () => {
  it('random values in every output style', () => {
    fc.assert(
      // a document is a mapping, as every configuration, kubeconfig and manifest is (a bare top-level
      // block scalar with an indentation indicator is read differently by the two: the spec's top level
      // is indentation -1)
      fc.property(value, style, (v, opts) => {
        const text = Y.stringify({ v }, opts as never);
        const want = outcome(() => oracle(text));
        // only documents the writer wrote right (it reads back what it was given): a few of its outputs
        // it cannot read back, or reads back changed, and there the two readers may part ways
        fc.pre(want.ok && isDeepStrictEqual(want.v, { v }));
        expect(outcome(() => parseYaml(text))).toEqual(want);
      }),
      { numRuns: 600 },
    );
  });

  it('JSON, which is YAML too', () => {
    fc.assert(
      fc.property(value, fc.constantFrom(0, 2), (v, indent) => {
        const text = JSON.stringify(v, null, indent) ?? 'null';
        expect(parseYaml(text)).toEqual(oracle(text));
      }),
      { numRuns: 300 },
    );
  });
});

/** YAML files of this repository (and Helm's chart files), one document each */
function corpus(): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === '.git' || name.startsWith('.cache')) continue;
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory() && depth < 6) walk(p, depth + 1);
      else if (/\.ya?ml$/.test(name) && st.size < 200_000) out.push(p);
    }
  };
  walk(join(import.meta.dirname, '../..'), 0);
  return out;
}

describe('real documents', () => {
  it('every single-document YAML file here reads as the yaml package reads it (templates aside)', () => {
    let compared = 0;
    for (const file of corpus()) {
      const text = readFileSync(file, 'utf8');
      if (text.includes('{{')) continue; // Helm templates are not YAML until rendered
      for (const doc of text.split(/^---\s*$/m)) {
        const want = outcome(() => oracle(doc));
        if (!want.ok) continue;
        expect({ file, got: outcome(() => parseYaml(doc)) }).toEqual({ file, got: want });
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(5);
  });

  it('a kubeconfig as kubectl and kind write it', () => {
    const kc = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTi==
    server: https://127.0.0.1:6443
  name: kind-kind
contexts:
- context:
    cluster: kind-kind
    user: kind-kind
  name: kind-kind
current-context: kind-kind
kind: Config
preferences: {}
users:
- name: kind-kind
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
`;
    expect(parseYaml(kc)).toEqual(oracle(kc));
  });

  it('a configuration with comments, flow maps and a PEM block', () => {
    const cfg = `# fleet
controlPlane: {server: "https://karmada.example:5443", token: t} # inline
members:
  mode: static
  clusters:
    - name: m1 # first
      server: https://m1.example
      certificateAuthorityData: |
        -----BEGIN CERTIFICATE-----
        MIIB
        -----END CERTIFICATE-----
    - {name: m2, server: 'https://m2.example', timeoutSeconds: 5}
authentication:
  anonymous: { enabled: true }
timeouts:
  requestSeconds: 30.5
`;
    expect(parseYaml(cfg)).toEqual(oracle(cfg));
  });
});

describe('refusals name the line and column', () => {
  it.each([
    ['a: 1\na: 2', /duplicated mapping key at line 2, column 1/],
    ['a: 1\n---\nb: 2', /expected a single document/],
    ['a:\n\t- b', /tab characters must not be used in indentation at line 2, column 1/],
    ['a: "x', /double quoted scalar at line 1, column \d+/],
    ['a: [1, 2', /at line 1, column \d+/],
    ['a: b: c', /at line 1, column \d+/],
    ['a: *nope', /unidentified alias "nope"|nope/],
    ['a: b\n c: d', /at line 2, column \d+/],
  ])('%j', (text, message) => {
    expect(() => parseYaml(text)).toThrow(YamlError);
    expect(() => parseYaml(text)).toThrow(message);
    expect(() => oracle(text)).toThrow();
  });

  it('explicit keys are read as the yaml package reads them', () => {
    expect(parseYaml('? a\n: b')).toEqual(oracle('? a\n: b'));
  });

  it('an alias bomb stops at 100 aliases', () => {
    const lines = ['a: &a [x, x]'];
    for (let k = 0; k < 101; k++) lines.push(`k${k}: *a`);
    expect(() => parseYaml(lines.join('\n'))).toThrow(YamlError);
    lines.length = 100;
    expect(() => parseYaml(lines.join('\n'))).not.toThrow();
  });

  it('a few aliases that would expand past a million nodes are refused before anyone serialises them', () => {
    // nine levels of ten references each: 10^9 nodes as JSON, 90 aliases in the text
    const lines = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let k = 1; k <= 9; k++)
      lines.push(
        `l${k}: &l${k} [${Array(10)
          .fill(`*l${k - 1}`)
          .join(', ')}]`,
      );
    const t0 = Date.now();
    expect(() => parseYaml(lines.join('\n'))).toThrow(/expand past 1000000 nodes/);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('nesting deeper than the JSON limit is refused, not a stack overflow', () => {
    expect(() => parseYaml(`a: ${'['.repeat(1200)}${']'.repeat(1200)}`)).toThrow(YamlError);
    expect(parseYaml(`a: ${'['.repeat(500)}${']'.repeat(500)}`)).toBeTruthy();
  });

  it('keys named __proto__ stay data', () => {
    const v = parseYaml('__proto__: {polluted: true}\n') as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
