import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pathAndSearch } from './index.ts';

/** characters that matter to the WHATWG parser: dots, percent signs, separators, ones it encodes */
const CHARS = [
  'a',
  'Z',
  '0',
  '-',
  '.',
  '_',
  '~',
  '%',
  '2',
  'e',
  'E',
  '/',
  '?',
  '&',
  '=',
  '+',
  ':',
  '@',
  '!',
  '$',
  "'",
  '(',
  '*',
  ',',
  ';',
  ' ',
  '"',
  '<',
  '>',
  '`',
  '{',
  '}',
  '[',
  ']',
  '\\',
  '#',
  '|',
  '^',
  'é',
  '\t',
];

const target = fc.array(fc.constantFrom(...CHARS), { maxLength: 40 }).map((cs) => `/${cs.join('')}`);

describe('pathAndSearch', () => {
  it('gives what new URL gives for any request target', () => {
    fc.assert(
      fc.property(target, (t) => {
        const url = `http://127.0.0.1:8080${t}`;
        const u = new URL(url);
        expect(pathAndSearch(url)).toEqual({ pathname: u.pathname, search: u.search });
      }),
      { numRuns: 5000 },
    );
  });

  it('keeps the common kube paths off the parser and right', () => {
    for (const t of [
      '/clusterspaces/member1/api/v1/namespaces/bench/configmaps/small',
      '/api/v1/pods?limit=500&resourceVersion=0',
      '/api/v1/pods?',
      '/apis/apps/v1/namespaces/a/deployments?watch=true&timeoutSeconds=30',
      '/a/%2e%2e/b',
      '/a/./b',
      '/.well-known/openid-configuration',
      '/x?y=%27z%27',
    ]) {
      const u = new URL(`https://h${t}`);
      expect(pathAndSearch(`https://h${t}`)).toEqual({ pathname: u.pathname, search: u.search });
    }
    expect(pathAndSearch('http://h')).toEqual({ pathname: '/', search: '' });
  });
});
