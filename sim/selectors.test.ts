import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StatusError } from './http.ts';
import {
  type LabelRequirement,
  matchLabels,
  parseFieldSelector,
  parseFieldTerms,
  parseLabelSelector,
  printFieldSelector,
  printLabelSelector,
} from './selectors.ts';

/** The 400 message a selector gets, or undefined when it parses. */
function refusal(s: string): string | undefined {
  try {
    parseLabelSelector(s);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    const st = (e as StatusError).status;
    expect(st).toMatchObject({ code: 400, reason: 'BadRequest', status: 'Failure' });
    return st.message;
  }
}

describe('label selector grammar (apimachinery labels.Parse)', () => {
  it('parses every operator, sorts requirements by key and values as a set', () => {
    expect(parseLabelSelector('z=1,a==2,m!=3, b in (y,x,x) ,c notin (q),d,!e,f>5,g<12')).toEqual([
      { key: 'a', operator: '==', values: ['2'] },
      { key: 'b', operator: 'in', values: ['x', 'y'] },
      { key: 'c', operator: 'notin', values: ['q'] },
      { key: 'd', operator: 'exists', values: [] },
      { key: 'e', operator: '!', values: [] },
      { key: 'f', operator: 'gt', values: ['5'] },
      { key: 'g', operator: 'lt', values: ['12'] },
      { key: 'm', operator: '!=', values: ['3'] },
      { key: 'z', operator: '=', values: ['1'] },
    ]);
  });

  it('reads empty values the way the Go parser does', () => {
    expect(parseLabelSelector('a=')).toEqual([{ key: 'a', operator: '=', values: [''] }]);
    expect(parseLabelSelector('a=,b')[0]).toEqual({ key: 'a', operator: '=', values: [''] });
    // `()` is the set {""}: accepted, not an error (parseValues inserts the empty value)
    expect(parseLabelSelector('a in ()')).toEqual([{ key: 'a', operator: 'in', values: [''] }]);
    expect(parseLabelSelector('a notin ()')).toEqual([{ key: 'a', operator: 'notin', values: [''] }]);
    expect(parseLabelSelector('a in (,x)')[0]!.values).toEqual(['', 'x']);
    expect(parseLabelSelector('a in (x,)')[0]!.values).toEqual(['', 'x']);
    expect(parseLabelSelector('a in (x,,y)')[0]!.values).toEqual(['', 'x', 'y']);
    // in / notin are plain identifiers where a key or value is expected
    expect(parseLabelSelector('in in (notin)')).toEqual([{ key: 'in', operator: 'in', values: ['notin'] }]);
    expect(parseLabelSelector('')).toEqual([]);
    expect(parseLabelSelector('  ')).toEqual([]);
  });

  it("refuses with kube-apiserver's messages", () => {
    expect(refusal('a=b,')).toBe("found '', expected: identifier after ','");
    expect(refusal(',a')).toBe("found ',', expected: !, identifier, or 'end of string'");
    expect(refusal('a b')).toBe(
      "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    );
    expect(refusal('a=b c')).toBe("found 'c', expected: ',' or 'end of string'");
    // a negative number is not a valid label value, so Gt/Lt cannot take one (NewRequirement checks both)
    expect(refusal('a<-2')).toContain('values[0][a]: Invalid value: "-2": a valid label');
    expect(refusal('!a=b')).toBe("found '=', expected: ',' or 'end of string'");
    expect(refusal('a in x')).toBe("unable to parse requirement: found 'x' expected: '('");
    expect(refusal('a in (x')).toBe("unable to parse requirement: found '', expected: ',' or ')'");
    expect(refusal('a in (=')).toBe(
      "unable to parse requirement: found '=', expected: ',', ')' or identifier",
    );
    expect(refusal('a in (x,=')).toBe("unable to parse requirement: found '=', expected: ',', or identifier");
    expect(refusal('a==(')).toBe("unable to parse requirement: found '(', expected: identifier");
    expect(refusal('a (')).toBe(
      "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt",
    );
    expect(refusal('a>x')).toBe(
      "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
    );
    expect(refusal('a>99999999999999999999')).toContain('the value must be an integer');
    // RegexError's examples are joined with "', " then " or ": the double space is kube's
    expect(refusal('a=-x')).toBe(
      "unable to parse requirement: values[0][a]: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
    expect(refusal('-a')).toBe(
      "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    );
    expect(refusal('Example.com/a')).toContain(
      '<nil>: Invalid value: "Example.com/a": prefix part a lowercase RFC 1123',
    );
    expect(refusal('/a')).toBe(
      'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty',
    );
    expect(refusal('a/b/c')).toContain('a qualified name must consist of');
    expect(refusal(`${'x'.repeat(64)}`)).toContain('name part must be no more than 63 characters');
    // several problems at once are aggregated in brackets
    expect(refusal('a>-x')).toMatch(
      /^unable to parse requirement: \[values\[0\]: .*, values\[0\]\[a\]: .*\]$/,
    );
  });

  it('matches like Requirement.Matches', () => {
    const sel = parseLabelSelector('a=1,b!=2,c in (x,y),d notin (z),e,!f,g>3,h<3');
    const ok = { a: '1', c: 'y', e: '', g: '4', h: '-1' }; // a label -1 still compares as an integer
    expect(matchLabels(sel, ok)).toBe(true);
    expect(matchLabels(sel, { ...ok, b: '2' })).toBe(false);
    expect(matchLabels(sel, { ...ok, d: 'z' })).toBe(false);
    expect(matchLabels(sel, { ...ok, f: 'x' })).toBe(false);
    expect(matchLabels(sel, { ...ok, g: 'x' })).toBe(false);
    expect(matchLabels(sel, { ...ok, g: '3' })).toBe(false);
    const { e: _e, ...noE } = ok;
    expect(matchLabels(sel, noE)).toBe(false);
    expect(matchLabels(parseLabelSelector('a notin ()'), { a: '' })).toBe(false);
    expect(matchLabels(parseLabelSelector('a notin ()'), { a: 'x' })).toBe(true);
    expect(matchLabels([], undefined)).toBe(true);
  });
});

// ---- properties -------------------------------------------------------------------------------

const alnum = fc.constantFrom(...'abcXYZ019'.split(''));
const inner = fc.constantFrom(...'abz09-_.'.split(''));
/** a valid qualified name part: alphanumeric ends, [-_.a-z0-9] inside, at most 63 */
const namePart = fc
  .tuple(alnum, fc.array(inner, { maxLength: 8 }), alnum)
  .map(([a, m, b]) => `${a}${m.join('')}${b}`)
  .chain((s) => fc.constantFrom(s, s.slice(0, 1)));
const prefix = fc.array(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,4}[a-z0-9])?$/), {
  minLength: 1,
  maxLength: 3,
});
const key = fc.oneof(
  namePart,
  fc.tuple(prefix, namePart).map(([p, n]) => `${p.join('.')}/${n}`),
);
const value = fc.oneof(fc.constant(''), namePart);
// label values: no sign, so 0 .. 2^63-1
const int = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String);

const requirement: fc.Arbitrary<LabelRequirement> = fc.oneof(
  fc.record({ key, operator: fc.constantFrom('=', '==', '!=' as const), values: value.map((v) => [v]) }),
  fc.record({
    key,
    operator: fc.constantFrom('in', 'notin' as const),
    values: fc.uniqueArray(value, { minLength: 1, maxLength: 4 }).map((v) => [...v].sort()),
  }),
  fc.record({ key, operator: fc.constantFrom('exists', '!' as const), values: fc.constant([]) }),
  fc.record({ key, operator: fc.constantFrom('gt', 'lt' as const), values: int.map((v) => [v]) }),
) as fc.Arbitrary<LabelRequirement>;

const byKey = (a: LabelRequirement, b: LabelRequirement) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

describe('label selector properties', () => {
  it('print → parse gives the requirements back (sorted by key)', () => {
    fc.assert(
      fc.property(fc.array(requirement, { maxLength: 6 }), (reqs) => {
        const parsed = parseLabelSelector(printLabelSelector(reqs));
        expect(parsed).toEqual([...reqs].sort(byKey));
      }),
      { numRuns: 500 },
    );
  });

  it('any input either parses or is refused with a 400 Status, never another exception', () => {
    const noisy = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc
        .array(
          fc.constantFrom(
            'a',
            'b',
            '=',
            '!',
            '(',
            ')',
            ',',
            ' ',
            'in',
            'notin',
            '>',
            '<',
            '1',
            '-',
            '/',
            '.',
            '\0',
          ),
          {
            maxLength: 20,
          },
        )
        .map((a) => a.join('')),
    );
    fc.assert(
      fc.property(noisy, (s) => {
        try {
          const reqs = parseLabelSelector(s);
          // what parses prints to something that parses to the same requirements
          expect(parseLabelSelector(printLabelSelector(reqs))).toEqual(reqs);
        } catch (e) {
          if (!(e instanceof StatusError)) throw e;
          expect(e.status.code).toBe(400);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('field selectors (apimachinery fields.ParseSelector)', () => {
  it('splits on unescaped commas, takes the first operator, unescapes values', () => {
    expect(parseFieldTerms('b=2,a!=1,c==x\\,y\\=z\\\\')).toEqual([
      { field: 'a', operator: '!=', value: '1' },
      { field: 'b', operator: '=', value: '2' },
      { field: 'c', operator: '=', value: 'x,y=z\\' },
    ]);
    expect(parseFieldTerms('a=,,')).toEqual([{ field: 'a', operator: '=', value: '' }]);
  });

  it("refuses with kube-apiserver's messages", () => {
    const msg = (s: string) => {
      try {
        parseFieldSelector(s, 'pods');
      } catch (e) {
        return (e as StatusError).status.message;
      }
    };
    expect(msg('abc')).toBe("invalid selector: 'abc'; can't understand 'abc'");
    expect(msg('a=b=c')).toBe('invalid field selector: unescaped character in value: 61');
    expect(msg('metadata.name=a\\x')).toBe('invalid field selector: invalid escape sequence: \\x');
    expect(msg('metadata.name=a\\')).toBe('invalid field selector: invalid escape sequence: \\');
    expect(msg('spec.foo=x')).toBe('field label not supported: spec.foo');
    expect(parseFieldSelector('status.phase!=Running', 'pods')).toEqual([
      { field: 'status.phase', operator: '!=', value: 'Running' },
    ]);
  });

  it('print → parse round trip, and never a non-Status error', () => {
    const field = fc.stringMatching(/^[a-zA-Z.]{1,12}$/);
    const term = fc.record({
      field,
      operator: fc.constantFrom('=', '!=' as const),
      value: fc.string({ maxLength: 10 }),
    });
    fc.assert(
      fc.property(fc.array(term, { maxLength: 5 }), (terms) => {
        // Go sorts the printed terms before parsing them
        const want = terms
          .map((t) => ({ t, p: printFieldSelector([t]) }))
          .sort((x, y) => (x.p < y.p ? -1 : x.p > y.p ? 1 : 0))
          .map(({ t }) => t);
        expect(parseFieldTerms(printFieldSelector(terms))).toEqual(want);
        for (const t of terms) expect(parseFieldTerms(printFieldSelector([t]))).toEqual([t]);
      }),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (s) => {
        try {
          parseFieldSelector(s, 'pods');
        } catch (e) {
          if (!(e instanceof StatusError)) throw e;
          expect(e.status.code).toBe(400);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
