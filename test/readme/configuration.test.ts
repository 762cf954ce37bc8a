/**
 * docs/configuration.md against the schema: every key the configuration schema accepts has a row in one
 * of the page's `key` tables, every row names a key the schema accepts, and every default the page
 * writes as a value (`30`, `true`, `[RS256]`) is the default the schema fills in. The reference is
 * written by hand (its meanings are prose) and cannot drift from the code unnoticed.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { configSchema, parseConfig } from '../../src/config/schema.ts';

const PAGE = readFileSync(resolve('docs/configuration.md'), 'utf8');

/** zod's internal definition tree, walked generically */
type Def = any;

/** Every key path the schema accepts: objects' keys, `[]` for list elements, union options merged. */
function schemaKeys(): Set<string> {
  const keys = new Set<string>();
  const walk = (schema: { _zod: { def: Def } }, path: string): void => {
    const def = schema._zod.def;
    switch (def.type) {
      case 'object':
        for (const [k, v] of Object.entries(def.shape)) {
          const p = path ? `${path}.${k}` : k;
          keys.add(p);
          walk(v as { _zod: { def: Def } }, p);
        }
        return;
      case 'optional':
      case 'default':
      case 'prefault':
      case 'nullable':
      case 'readonly':
        walk(def.innerType, path);
        return;
      case 'pipe':
        walk(def.in, path);
        return;
      case 'union':
        for (const option of def.options) walk(option, path);
        return;
      case 'array':
        walk(def.element, `${path}[]`);
        return;
      default:
        return; // a leaf (string, number, enum, record of free keys, …)
    }
  };
  walk(configSchema as unknown as { _zod: { def: Def } }, '');
  return keys;
}

interface Row {
  key: string;
  default: string;
  line: number;
}

/** The rows of every table whose header starts with `key`: first cell the key, second the default. */
function documentedRows(): Row[] {
  const rows: Row[] = [];
  let inKeyTable = false;
  PAGE.split('\n').forEach((line, i) => {
    if (!line.startsWith('|')) {
      inKeyTable = false;
      return;
    }
    const cells = line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    if (/^-+$/.test(cells[0]!.replace(/\s/g, ''))) return;
    if (!inKeyTable) {
      inKeyTable = cells[0] === 'key';
      return;
    }
    const key = /^`([^`]+)`$/.exec(cells[0]!);
    if (!key) throw new Error(`docs/configuration.md:${i + 1}: a key cell is not one \`key\`: ${cells[0]}`);
    rows.push({ key: key[1]!, default: cells[1] ?? '', line: i + 1 });
  });
  return rows;
}

/**
 * Documents that between them reach every key with a default, the rest of each left to the schema; the
 * least written first, so a list or section left out shows its own default.
 */
const SAMPLES = [
  { controlPlane: { server: 'https://karmada.example' }, authentication: { staticTokens: { csv: 't,u,1' } } },
  {
    controlPlane: { server: 'https://karmada.example' },
    authentication: {
      oidc: [{ issuer: 'https://issuer.example', audiences: ['fleet'] }],
      edge: { issuer: 'https://edge.example', audiences: ['fleet'] },
      frontProxy: { clientCAData: 'Y2E=' },
      x509: { clientCAData: 'Y2E=' },
      anonymous: {},
    },
    authorization: { rules: [{ users: ['u'] }] },
    cache: { publicIdentity: { user: 'discovery' } },
  },
  {
    controlPlane: { server: 'https://karmada.example' },
    members: { mode: 'static', clusters: [{ name: 'member1', server: 'https://member1.example' }] },
    authentication: { anonymous: { enabled: true } },
  },
].map((doc) => parseConfig(doc));

/** The value at a documented key in the first sample that has it (a list's first element for `[]`). */
function filledIn(key: string): { found: boolean; value?: unknown } {
  for (const sample of SAMPLES) {
    let at: unknown = sample;
    for (const part of key.split('.')) {
      const list = part.endsWith('[]');
      at = (at as Record<string, unknown> | undefined)?.[list ? part.slice(0, -2) : part];
      if (list) at = (at as unknown[] | undefined)?.[0];
    }
    if (at !== undefined) return { found: true, value: at };
  }
  return { found: false };
}

describe('docs/configuration.md', () => {
  const accepted = schemaKeys();
  const rows = documentedRows();
  const documented = new Set(rows.map((r) => r.key));

  it('documents every key the schema accepts', () => {
    expect(accepted.size).toBeGreaterThan(100);
    expect([...accepted].filter((k) => !documented.has(k))).toEqual([]);
  });

  it('documents only keys the schema accepts, each once', () => {
    expect(rows.filter((r) => !accepted.has(r.key)).map((r) => `${r.line}: ${r.key}`)).toEqual([]);
    expect(rows.length).toBe(documented.size);
  });

  it('writes each default the schema fills in as the schema fills it in', () => {
    let checked = 0;
    for (const row of rows) {
      const literal = /^`([^`]+)`$/.exec(row.default)?.[1];
      // prose (`—`, `required`, "system roots") and references to another key are not values
      if (literal === undefined || documented.has(literal)) continue;
      const expected = parseYaml(literal) as unknown;
      const actual = filledIn(row.key);
      expect(actual.found, `docs/configuration.md:${row.line}: ${row.key} has no default in the schema`).toBe(
        true,
      );
      if (expected !== null && typeof expected === 'object' && !Array.isArray(expected))
        expect(actual.value, `${row.key} (line ${row.line})`).toMatchObject(expected);
      else expect(actual.value, `${row.key} (line ${row.line})`).toEqual(expected);
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
  });
});
