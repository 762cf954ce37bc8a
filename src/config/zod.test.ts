/**
 * The fleet's conventions on zod/mini (./zod.ts), one by one: the messages (zod's English wording, from
 * the issue codes), one issue per problem, refinements only on values that passed, unions reported by
 * their closest option. Before the zod/mini schema replaced the fleet's former hand-written checker, the
 * two were fuzzed against each other (20,000 mutated configurations): the same configurations accepted,
 * the same output and the same messages, except URLs that zod reads more strictly (`https:host` without
 * `//` is refused; surrounding spaces, tabs and newlines are removed, as the URL parser removes them).
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import {
  flattenIssues,
  gte,
  httpUrl,
  int,
  lte,
  maxLength,
  minLength,
  positive,
  refine,
  regex,
  superRefine,
} from './zod.ts';

const issues = (s: z.ZodMiniType, x: unknown) => {
  const r = s.safeParse(x);
  return r.success ? [] : flattenIssues(r.error.issues).map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('zod/mini with the fleet’s conventions', () => {
  it('types, with zod’s wording', () => {
    expect(issues(z.string(), 1)).toEqual([': Invalid input: expected string, received number']);
    expect(issues(z.number(), Number.NaN)).toEqual([': Invalid input: expected number, received NaN']);
    expect(issues(z.number(), Infinity)).toEqual([': Invalid input: expected number, received Infinity']);
    expect(issues(z.boolean(), 'yes')).toEqual([': Invalid input: expected boolean, received string']);
    expect(issues(z.object({}), null)).toEqual([': Invalid input: expected object, received null']);
    expect(issues(z.array(z.string()), {})).toEqual([': Invalid input: expected array, received object']);
    expect(issues(z.record(z.string(), z.string()), [])).toEqual([
      ': Invalid input: expected record, received array',
    ]);
  });

  it('bounds, integers, patterns, URLs', () => {
    expect(issues(z.string().check(minLength(1)), '')).toEqual([
      ': Too small: expected string to have >=1 characters',
    ]);
    expect(issues(z.string().check(maxLength(2)), 'abc')).toEqual([
      ': Too big: expected string to have <=2 characters',
    ]);
    expect(issues(z.number().check(lte(3)), 4)).toEqual([': Too big: expected number to be <=3']);
    expect(issues(z.number().check(gte(3)), 2)).toEqual([': Too small: expected number to be >=3']);
    expect(issues(z.number().check(positive()), 0)).toEqual([': Too small: expected number to be >0']);
    expect(issues(z.array(z.string()).check(minLength(1)), [])).toEqual([
      ': Too small: expected array to have >=1 items',
    ]);
    expect(issues(z.number().check(int()), 1.5)).toEqual([': Invalid input: expected int, received number']);
    expect(issues(z.number().check(int()), 2 ** 60)).toEqual([
      ': Invalid input: expected int, received number',
    ]);
    expect(issues(z.string().check(regex(/^a/, 'starts with a')), 'b')).toEqual([': starts with a']);
    const url = httpUrl('http(s) only');
    expect(issues(url, 'https://x')).toEqual([]);
    expect(issues(url, 'ftp://x')).toEqual([': http(s) only']);
    expect(issues(url, 'not a url')).toEqual([': http(s) only']);
    expect(issues(url, 7)).toEqual([': Invalid input: expected string, received number']);
  });

  it('one issue per problem: a failed check stops the checks after it, even on a value of the wrong type', () => {
    const name = z.string().check(minLength(1), maxLength(3), regex(/^[a-z]+$/, 'lowercase'));
    expect(issues(name, '')).toEqual([': Too small: expected string to have >=1 characters']);
    expect(issues(name, 'ABCDE')).toEqual([': Too big: expected string to have <=3 characters']);
    expect(issues(name, [])).toEqual([': Invalid input: expected string, received array']);
    expect(issues(z.array(z.string()).check(minLength(1)), '')).toEqual([
      ': Invalid input: expected array, received string',
    ]);
    expect(issues(z.number().check(int(), gte(10)), 0.5)).toEqual([
      ': Invalid input: expected int, received number',
    ]);
  });

  it('objects: unknown keys stripped, refused (strict) or kept (loose); absent optionals stay absent', () => {
    const shape = { a: z.string(), b: z.optional(z.number()) };
    expect(z.object(shape).parse({ a: 'x', z: 1 })).toEqual({ a: 'x' });
    expect(Object.keys(z.object(shape).parse({ a: 'x' }))).toEqual(['a']);
    expect(issues(z.strictObject(shape), { a: 'x', z: 1, y: 2 })).toEqual([': Unrecognized keys: "z", "y"']);
    expect(issues(z.strictObject(shape), { a: 'x', z: 1 })).toEqual([': Unrecognized key: "z"']);
    expect(z.looseObject(shape).parse({ a: 'x', z: 1 })).toEqual({ a: 'x', z: 1 });
    expect(issues(z.object(shape), { b: 'q' })).toEqual([
      'a: Invalid input: expected string, received undefined',
      'b: Invalid input: expected number, received string',
    ]);
  });

  it('default answers a fresh copy without checking it; prefault checks its value', () => {
    const s = z.object({ xs: z._default(z.array(z.string()), ['a']) });
    const one = s.parse({});
    one.xs.push('b');
    expect(s.parse({}).xs).toEqual(['a']);
    const p = z.prefault(z.object({ n: z._default(z.number(), 1), m: z.number() }), { m: 2 });
    expect(p.parse(undefined)).toEqual({ n: 1, m: 2 });
  });

  it('refinements run only on values that passed (not on an object with an unknown key), paths relative', () => {
    let calls = 0;
    const s = z.strictObject({ a: z.number() }).check(
      superRefine((o: { a: number }, ctx) => {
        calls++;
        if (o.a > 1) ctx.addIssue({ message: 'too much', path: ['a'] });
        if (o.a > 2) ctx.addIssue({ message: 'far too much', path: ['a'] });
      }),
      refine((o: { a: number }) => o.a !== 0, 'not zero'),
    );
    expect(issues(z.object({ in: s }), { in: { a: 'x' } })).toEqual([
      'in.a: Invalid input: expected number, received string',
    ]);
    expect(issues(s, { a: 0, extra: 1 })).toEqual([': Unrecognized key: "extra"']);
    expect(calls).toBe(0);
    expect(issues(z.object({ in: s }), { in: { a: 3 } })).toEqual(['in.a: too much', 'in.a: far too much']);
    expect(issues(s, { a: 0 })).toEqual([': not zero']);
  });

  it('arrays: a hole is an absent item', () => {
    // biome-ignore lint/suspicious/noSparseArray: the point of the test
    expect(issues(z.array(z.string()), ['a', , 'b'])).toEqual([
      '1: Invalid input: expected string, received undefined',
    ]);
  });

  it('unions answer the first option that accepts, else the closest option’s issues', () => {
    const kc = z.strictObject({ kubeconfig: z.strictObject({ inline: z.string() }) });
    const ep = z.strictObject({ server: httpUrl('must be an http(s) URL') });
    const u = z.object({ cp: z.union([kc, ep]) });
    expect(u.parse({ cp: { server: 'https://x' } })).toEqual({ cp: { server: 'https://x' } });
    expect(issues(u, { cp: { server: 'ftp://x' } })).toEqual(['cp.server: must be an http(s) URL']);
    // a tie: the first option's
    expect(issues(u, { cp: {} })).toEqual([
      'cp.kubeconfig: Invalid input: expected object, received undefined',
    ]);
  });

  it('discriminated unions pick by the literal field and name it when it matches none', () => {
    const d = z.discriminatedUnion('mode', [
      z.strictObject({ mode: z.literal('a'), n: z._default(z.number(), 1) }),
      z.strictObject({ mode: z.literal('b') }),
    ]);
    expect(d.parse({ mode: 'a' })).toEqual({ mode: 'a', n: 1 });
    expect(issues(d, { mode: 'c' })).toEqual(['mode: Invalid option: expected one of "a"|"b"']);
    expect(issues(d, { mode: 'b', n: 1 })).toEqual([': Unrecognized key: "n"']);
    expect(issues(z.enum(['x', 'y']), 'z')).toEqual([': Invalid option: expected one of "x"|"y"']);
    expect(issues(z.literal('x'), 'z')).toEqual([': Invalid input: expected "x"']);
  });

  it('records check keys and values', () => {
    expect(z.record(z.string(), z.string()).parse({ a: 'b' })).toEqual({ a: 'b' });
    expect(issues(z.record(z.string(), z.string()), { a: 1 })).toEqual([
      'a: Invalid input: expected string, received number',
    ]);
  });
});
