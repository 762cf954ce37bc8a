/**
 * The fleet's conventions on valibot (./valibot.ts), one by one: the messages (zod's English wording, as
 * before valibot replaced zod/mini), one issue per problem, refinements only on values that passed, unions
 * reported by their closest option. When valibot replaced zod/mini, the two were fuzzed against each other
 * (20,000 mutated configurations through `parseConfig`): the same configurations accepted, the same output
 * and the same messages.
 */
import { describe, expect, it } from 'vitest';
import * as v from './valibot.ts';
import {
  flattenIssues,
  gte,
  httpUrl,
  int,
  lte,
  maxLength,
  minLength,
  parsing,
  positive,
  refine,
  regex,
  strict,
  superRefine,
} from './valibot.ts';

const issues = (s: Parameters<typeof parsing>[0], x: unknown) => {
  const r = parsing(s).safeParse(x);
  return r.success ? [] : flattenIssues(r.error.issues).map((i) => `${i.path.join('.')}: ${i.message}`);
};
const parse = (s: Parameters<typeof parsing>[0], x: unknown) => parsing(s).parse(x);

describe('valibot with the fleet’s conventions', () => {
  it('types, with zod’s wording', () => {
    expect(issues(v.string(), 1)).toEqual([': Invalid input: expected string, received number']);
    expect(issues(v.number(), Number.NaN)).toEqual([': Invalid input: expected number, received NaN']);
    expect(issues(v.number(), Infinity)).toEqual([': Invalid input: expected number, received Infinity']);
    expect(issues(v.boolean(), 'yes')).toEqual([': Invalid input: expected boolean, received string']);
    expect(issues(v.object({}), null)).toEqual([': Invalid input: expected object, received null']);
    expect(issues(v.object({}), [])).toEqual([': Invalid input: expected object, received array']);
    expect(issues(v.array(v.string()), {})).toEqual([': Invalid input: expected array, received object']);
    expect(issues(v.record(v.string()), [])).toEqual([': Invalid input: expected record, received array']);
  });

  it('bounds, integers, patterns, URLs', () => {
    expect(issues(v.pipe(v.string(), minLength(1)), '')).toEqual([
      ': Too small: expected string to have >=1 characters',
    ]);
    expect(issues(v.pipe(v.string(), maxLength(2)), 'abc')).toEqual([
      ': Too big: expected string to have <=2 characters',
    ]);
    expect(issues(v.pipe(v.number(), lte(3)), 4)).toEqual([': Too big: expected number to be <=3']);
    expect(issues(v.pipe(v.number(), gte(3)), 2)).toEqual([': Too small: expected number to be >=3']);
    expect(issues(v.pipe(v.number(), positive()), 0)).toEqual([': Too small: expected number to be >0']);
    expect(issues(v.pipe(v.array(v.string()), minLength(1)), [])).toEqual([
      ': Too small: expected array to have >=1 items',
    ]);
    expect(issues(v.pipe(v.number(), int()), 1.5)).toEqual([
      ': Invalid input: expected int, received number',
    ]);
    expect(issues(v.pipe(v.number(), int()), 2 ** 60)).toEqual([
      ': Invalid input: expected int, received number',
    ]);
    expect(issues(v.pipe(v.string(), regex(/^a/, 'starts with a')), 'b')).toEqual([': starts with a']);
    const url = httpUrl('http(s) only');
    expect(issues(url, 'https://x')).toEqual([]);
    expect(issues(url, 'ftp://x')).toEqual([': http(s) only']);
    expect(issues(url, 'https:host')).toEqual([': http(s) only']);
    expect(issues(url, 'not a url')).toEqual([': http(s) only']);
    expect(issues(url, 7)).toEqual([': Invalid input: expected string, received number']);
    expect(parse(url, ' https://a\t.b/\n ')).toBe('https://a.b/');
  });

  it('one issue per problem: a failed check stops the checks after it, even on a value of the wrong type', () => {
    const name = v.pipe(v.string(), minLength(1), maxLength(3), regex(/^[a-z]+$/, 'lowercase'));
    expect(issues(name, '')).toEqual([': Too small: expected string to have >=1 characters']);
    expect(issues(name, 'ABCDE')).toEqual([': Too big: expected string to have <=3 characters']);
    expect(issues(name, [])).toEqual([': Invalid input: expected string, received array']);
    expect(issues(v.pipe(v.array(v.string()), minLength(1)), '')).toEqual([
      ': Invalid input: expected array, received string',
    ]);
    expect(issues(v.pipe(v.number(), int(), gte(10)), 0.5)).toEqual([
      ': Invalid input: expected int, received number',
    ]);
  });

  it('objects: unknown keys stripped, refused (strict) or kept (loose); absent optionals stay absent', () => {
    const shape = { a: v.string(), b: v.optional(v.number()) };
    expect(parse(v.object(shape), { a: 'x', z: 1 })).toEqual({ a: 'x' });
    expect(Object.keys(parse(v.object(shape), { a: 'x' }) as object)).toEqual(['a']);
    expect(issues(strict(shape), { a: 'x', z: 1, y: 2 })).toEqual([': Unrecognized keys: "z", "y"']);
    expect(issues(strict(shape), { a: 'x', z: 1 })).toEqual([': Unrecognized key: "z"']);
    expect(issues(v.object({ in: strict(shape) }), { in: { a: 'x', z: 1 } })).toEqual([
      'in: Unrecognized key: "z"',
    ]);
    expect(parse(v.loose(shape), { a: 'x', z: 1 })).toEqual({ a: 'x', z: 1 });
    expect(issues(v.object(shape), { b: 'q' })).toEqual([
      'a: Invalid input: expected string, received undefined',
      'b: Invalid input: expected number, received string',
    ]);
    // an absent key is told what its schema says of undefined
    expect(issues(strict({ n: v.pipe(v.number(), gte(1)) }), {})).toEqual([
      'n: Invalid input: expected number, received undefined',
    ]);
    expect(issues(strict({ o: strict({}) }), {})).toEqual([
      'o: Invalid input: expected object, received undefined',
    ]);
  });

  it('a default is parsed as the value would be, and answers a fresh copy', () => {
    const s = v.object({ xs: v.optional(v.array(v.string()), ['a']) });
    const one = parse(s, {}) as { xs: string[] };
    one.xs.push('b');
    expect(parse(s, {})).toEqual({ xs: ['a'] });
    const p = v.optional(v.object({ n: v.optional(v.number(), 1), m: v.number() }), { m: 2 });
    expect(parse(p, undefined)).toEqual({ n: 1, m: 2 });
  });

  it('refinements run only on values that passed (not on an object with an unknown key), paths relative', () => {
    let calls = 0;
    const s = v.pipe(
      strict({ a: v.number() }),
      superRefine((o: { a: number }, ctx) => {
        calls++;
        if (o.a > 1) ctx.addIssue({ message: 'too much', path: ['a'] });
        if (o.a > 2) ctx.addIssue({ message: 'far too much', path: ['a'] });
      }),
      refine((o: { a: number }) => o.a !== 0, 'not zero'),
    );
    expect(issues(v.object({ in: s }), { in: { a: 'x' } })).toEqual([
      'in.a: Invalid input: expected number, received string',
    ]);
    expect(issues(s, { a: 0, extra: 1 })).toEqual([': Unrecognized key: "extra"']);
    expect(calls).toBe(0);
    expect(issues(v.object({ in: s }), { in: { a: 3 } })).toEqual(['in.a: too much', 'in.a: far too much']);
    expect(issues(s, { a: 0 })).toEqual([': not zero']);
    // nor on an object one of whose values failed a check
    const url = strict({ u: httpUrl('bad url'), t: v.optional(v.string()) });
    expect(
      issues(
        v.pipe(
          url,
          refine(() => false, 'refined'),
        ),
        { u: 'ftp://x' },
      ),
    ).toEqual(['u: bad url']);
  });

  it('arrays: a hole is an absent item', () => {
    // biome-ignore lint/suspicious/noSparseArray: the point of the test
    expect(issues(v.array(v.string()), ['a', , 'b'])).toEqual([
      '1: Invalid input: expected string, received undefined',
    ]);
  });

  it('unions answer the first option that accepts, else the closest option’s issues', () => {
    const kc = strict({ kubeconfig: strict({ inline: v.string() }) });
    const ep = strict({ server: httpUrl('must be an http(s) URL') });
    const u = v.object({ cp: v.union([kc, ep]) });
    expect(parse(u, { cp: { server: 'https://x' } })).toEqual({ cp: { server: 'https://x' } });
    expect(issues(u, { cp: { server: 'ftp://x' } })).toEqual(['cp.server: must be an http(s) URL']);
    expect(issues(u, { cp: { server: 5 } })).toEqual([
      'cp.server: Invalid input: expected string, received number',
    ]);
    // a tie: the first option's
    expect(issues(u, { cp: {} })).toEqual([
      'cp.kubeconfig: Invalid input: expected object, received undefined',
    ]);
    expect(issues(u, {})).toEqual(['cp: Invalid input: expected object, received undefined']);
  });

  it('variants pick by the literal field and name it when it matches none', () => {
    const d = v.variant('mode', [
      v.strictOption({ mode: v.literal('a'), n: v.optional(v.number(), 1) }),
      v.strictOption({ mode: v.literal('b') }),
    ]);
    expect(parse(d, { mode: 'a' })).toEqual({ mode: 'a', n: 1 });
    expect(issues(d, { mode: 'c' })).toEqual(['mode: Invalid option: expected one of "a"|"b"']);
    expect(issues(d, {})).toEqual(['mode: Invalid option: expected one of "a"|"b"']);
    expect(issues(d, [])).toEqual([': Invalid input: expected object, received array']);
    expect(issues(d, { mode: 'b', n: 1 })).toEqual([': Unrecognized key: "n"']);
    expect(issues(v.picklist(['x', 'y']), 'z')).toEqual([': Invalid option: expected one of "x"|"y"']);
    expect(issues(v.literal('x'), 'z')).toEqual([': Invalid input: expected "x"']);
  });

  it('records check keys and values', () => {
    expect(parse(v.record(v.string()), { a: 'b' })).toEqual({ a: 'b' });
    expect(issues(v.record(v.string()), { a: 1 })).toEqual([
      'a: Invalid input: expected string, received number',
    ]);
  });

  it('a parsing schema throws every issue, one a line', () => {
    expect(() => parse(strict({ a: v.string(), b: v.string() }), {})).toThrow(
      'a: Invalid input: expected string, received undefined\nb: Invalid input: expected string, received undefined',
    );
  });
});
