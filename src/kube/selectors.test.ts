import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  escapeFieldValue,
  type FieldRequirement,
  parseFieldSelector,
  serializeFieldSelector,
  unescapeFieldValue,
} from './fields.ts';
import {
  CLUSTER_LABEL,
  type LabelRequirement,
  matchesLabels,
  parseLabelSelector,
  SelectorError,
  serializeLabelSelector,
  splitClusterSelector,
} from './selectors.ts';

/** Field-selector-shaped garbage: mostly near misses, so that both parsing and refusing are exercised. */
const fieldSelectorGarbage = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc
    .array(
      fc.constantFrom(
        'metadata.name',
        'a',
        'x.y',
        '=',
        '==',
        '!=',
        '!',
        ',',
        '\\',
        '\\,',
        '\\=',
        '\\\\',
        'v',
        ' ',
        '',
      ),
      { maxLength: 10 },
    )
    .map((a) => a.join('')),
);

const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?$/;
const dnsSubdomain = fc.stringMatching(
  /^[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,8}[a-z0-9])?){0,2}$/,
);
const labelKey = fc.oneof(
  fc.stringMatching(NAME_PART),
  fc.tuple(dnsSubdomain, fc.stringMatching(NAME_PART)).map(([p, n]) => `${p}/${n}`),
  fc.constantFrom('in', 'notin', CLUSTER_LABEL, 'app', 'app.kubernetes.io/name'),
);
const labelValue = fc.oneof(
  fc.constant(''),
  fc.stringMatching(NAME_PART),
  fc.constantFrom('in', 'notin', 'x'),
);
const intValue = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String);

const requirement: fc.Arbitrary<LabelRequirement> = fc.oneof(
  fc.record({
    key: labelKey,
    operator: fc.constantFrom('=', '==', '!=' as const),
    values: labelValue.map((v) => [v]),
  }),
  fc.record({
    key: labelKey,
    operator: fc.constantFrom('in', 'notin' as const),
    values: fc.uniqueArray(labelValue, { minLength: 1, maxLength: 4 }).map((v) => [...v].sort()),
  }),
  fc.record({
    key: labelKey,
    operator: fc.constantFrom('exists', '!' as const),
    values: fc.constant([] as string[]),
  }),
  fc.record({
    key: labelKey,
    operator: fc.constantFrom('gt', 'lt' as const),
    values: intValue.map((v) => [v]),
  }),
);

const ws = fc.constantFrom('', ' ', '  ', '\t', '\n ');

/** a non-canonical but valid spelling of a requirement */
function spell(r: LabelRequirement, s: string[]): string {
  const w = (i: number) => s[i % s.length] ?? '';
  switch (r.operator) {
    case 'exists':
      return `${w(0)}${r.key}${w(1)}`;
    case '!':
      return `${w(0)}!${w(1)}${r.key}${w(2)}`;
    case 'in':
    case 'notin':
      return `${w(0)}${r.key} ${w(1)}${r.operator}${w(2)}(${r.values.map((v, i) => `${w(i + 3)}${v}${w(i + 4)}`).join(',')})${w(5)}`;
    case 'gt':
      return `${w(0)}${r.key}${w(1)}>${w(2)}${r.values[0]}${w(3)}`;
    case 'lt':
      return `${w(0)}${r.key}${w(1)}<${w(2)}${r.values[0]}${w(3)}`;
    default:
      return `${w(0)}${r.key}${w(1)}${r.operator}${w(2)}${r.values[0]}${w(3)}`;
  }
}

function canonical(reqs: LabelRequirement[]): LabelRequirement[] {
  return reqs
    .map((r, i) => [r, i] as const)
    .sort((a, b) => (a[0].key < b[0].key ? -1 : a[0].key > b[0].key ? 1 : a[1] - b[1]))
    .map(([r]) => r);
}

describe('label selectors', () => {
  it('parse ∘ serialize round-trips generated selectors, whatever the spacing', () => {
    fc.assert(
      fc.property(
        fc.array(requirement, { maxLength: 6 }),
        fc.array(ws, { minLength: 1, maxLength: 8 }),
        (reqs, spaces) => {
          const text = reqs.map((r) => spell(r, spaces)).join(',');
          const parsed = parseLabelSelector(text);
          expect(parsed).toEqual(canonical(reqs));
          const canon = serializeLabelSelector(parsed);
          expect(parseLabelSelector(canon)).toEqual(parsed);
          expect(serializeLabelSelector(parseLabelSelector(canon))).toBe(canon);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('garbage throws nothing but SelectorError, and what parses is a fixed point', () => {
    const garbage = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc
        .array(
          fc.constantFrom(
            'a',
            'b/c',
            '=',
            '==',
            '!=',
            '!',
            ' ',
            ',',
            '(',
            ')',
            'in',
            'notin',
            '>',
            '<',
            '1',
            'x.y',
            '-',
            '_',
            '',
          ),
          { maxLength: 12 },
        )
        .map((a) => a.join('')),
    );
    // both outcomes must occur, or half the property goes unchecked
    const seen = { parsed: 0, refused: 0 };
    fc.assert(
      fc.property(garbage, (s) => {
        let reqs: LabelRequirement[];
        try {
          reqs = parseLabelSelector(s);
        } catch (e) {
          seen.refused++;
          expect(e).toBeInstanceOf(SelectorError);
          expect((e as SelectorError).status.code).toBe(400);
          expect((e as SelectorError).status.message).toBe((e as Error).message);
          return;
        }
        seen.parsed++;
        const canon = serializeLabelSelector(reqs);
        expect(parseLabelSelector(canon)).toEqual(reqs);
      }),
      { numRuns: 20000 },
    );
    expect(seen.parsed).toBeGreaterThan(500);
    expect(seen.refused).toBeGreaterThan(500);
  });

  it('parses the apimachinery examples', () => {
    const ok: Array<[string, string]> = [
      ['', ''],
      ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
      ['x!=a,y=b', 'x!=a,y=b'],
      ['x=,z= ', 'x=,z='],
      ['x= ,z= ', 'x=,z='],
      ['!x', '!x'],
      ['x>1', 'x>1'],
      ['x>1,z<5', 'x>1,z<5'],
      ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
      ['z notin (b,a), x in (a)', 'x in (a),z notin (a,b)'],
      ['w in (in), x notin (notin)', 'w in (in),x notin (notin)'],
      ['x == a', 'x==a'],
      ['x in ( a , b )', 'x in (a,b)'],
      ['x in (a,)', 'x in (,a)'],
      ['a.b.c/d-e_f.g', 'a.b.c/d-e_f.g'],
    ];
    for (const [input, canon] of ok)
      expect(serializeLabelSelector(parseLabelSelector(input)), input).toBe(canon);
  });

  it('refuses invalid selectors with kube-apiserver texts', () => {
    const cases: Array<[string, string]> = [
      ['x==a==b', "found '==', expected: ',' or 'end of string'"],
      ['!x=a', "found '=', expected: ',' or 'end of string'"],
      ['x=a,', "found '', expected: identifier after ','"],
      ['x in a', "unable to parse requirement: found 'a' expected: '('"],
      ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
      ['x ~ a', "unable to parse requirement: found '~', expected: in, notin, =, ==, !=, gt, lt"],
      [',x', "found ',', expected: !, identifier, or 'end of string'"],
      ['x y', "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"],
      [
        'x<a',
        `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`,
      ],
      [
        'app:monolith',
        `unable to parse requirement: <nil>: Invalid value: "app:monolith": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      ],
      [
        'app.kubernetes_io/name=x',
        `unable to parse requirement: <nil>: Invalid value: "app.kubernetes_io/name": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      ],
      ['x=a b', "found 'b', expected: ',' or 'end of string'"],
      [
        'x=a||y',
        `unable to parse requirement: values[0][x]: Invalid value: "a||y": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ],
    ];
    for (const [input, msg] of cases) {
      let err: unknown;
      try {
        parseLabelSelector(input);
      } catch (e) {
        err = e;
      }
      expect(err, input).toBeInstanceOf(SelectorError);
      expect((err as Error).message, input).toBe(msg);
    }
  });

  it('matches like Requirement.Matches', () => {
    const r = parseLabelSelector('a in (x,y),b notin (z),c,!d,e>5,f!=q');
    expect(matchesLabels(r, { a: 'x', c: '', e: '6' })).toBe(true);
    expect(matchesLabels(r, { a: 'x', b: 'z', c: '', e: '6' })).toBe(false);
    expect(matchesLabels(r, { a: 'x', c: '', d: '', e: '6' })).toBe(false);
    expect(matchesLabels(r, { a: 'x', c: '', e: '5' })).toBe(false);
    expect(matchesLabels(r, { a: 'x', c: '', e: 'six' })).toBe(false);
    expect(matchesLabels(r, { a: 'x', c: '', e: '6', f: 'q' })).toBe(false);
  });
});

describe('splitClusterSelector', () => {
  const clusters = ['m1', 'm2', 'm3'];
  it('picks clusters and forwards the rest', () => {
    const cases: Array<[string, string[], string]> = [
      ['', clusters, ''],
      ['app=web', clusters, 'app=web'],
      [`${CLUSTER_LABEL}=m2`, ['m2'], ''],
      [`${CLUSTER_LABEL}==m2,app=web`, ['m2'], 'app=web'],
      [`${CLUSTER_LABEL}!=m2, app in (a,b)`, ['m1', 'm3'], 'app in (a,b)'],
      [`${CLUSTER_LABEL} in (m1,m3,zz)`, ['m1', 'm3'], ''],
      [`${CLUSTER_LABEL} notin (m1)`, ['m2', 'm3'], ''],
      [CLUSTER_LABEL, clusters, ''],
      [`!${CLUSTER_LABEL},tier`, [], 'tier'],
      [`${CLUSTER_LABEL}=m1,${CLUSTER_LABEL}=m2`, [], ''],
      // apimachinery's parseValues reads "()" as the set {""} (its own doc example is "z notin ()"), and
      // NewRequirement accepts it: kube-apiserver answers 200, so the fleet does too. No cluster is named
      // "", so `notin ()` keeps every cluster and `in ()` keeps none.
      [`${CLUSTER_LABEL} notin ()`, clusters, ''],
      [`${CLUSTER_LABEL} in ()`, [], ''],
      [`${CLUSTER_LABEL} notin (),app notin ()`, clusters, 'app notin ()'],
    ];
    for (const [sel, want, fwd] of cases)
      expect(splitClusterSelector(sel, clusters), sel).toEqual({ clusters: want, forward: fwd });
  });
  it('agrees with matching each cluster on the generated selector', () => {
    fc.assert(
      fc.property(
        fc.array(requirement, { maxLength: 5 }),
        fc.uniqueArray(labelValue.filter(Boolean), { maxLength: 5 }),
        (reqs, cs) => {
          const text = serializeLabelSelector(reqs);
          const { clusters: got, forward } = splitClusterSelector(text, cs);
          const mine = reqs.filter((r) => r.key === CLUSTER_LABEL);
          expect(got).toEqual(cs.filter((c) => matchesLabels(mine, { [CLUSTER_LABEL]: c })));
          expect(parseLabelSelector(forward)).toEqual(canonical(reqs.filter((r) => r.key !== CLUSTER_LABEL)));
        },
      ),
      { numRuns: 3000 },
    );
  });
  it('throws SelectorError on invalid selectors', () => {
    expect(() => splitClusterSelector('a b', clusters)).toThrow(SelectorError);
  });
});

describe('field selectors', () => {
  const fieldName = fc.oneof(
    fc.constantFrom(
      'metadata.name',
      'metadata.namespace',
      'involvedObject.name',
      'status.phase',
      'spec.nodeName',
    ),
    fc.stringMatching(/^[A-Za-z][A-Za-z.]{0,10}$/),
  );
  const fieldReq: fc.Arbitrary<FieldRequirement> = fc.record({
    field: fieldName,
    operator: fc.constantFrom('=', '!=' as const),
    value: fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('a,b', 'a=b', 'a\\b', '\\', ',', '=', '!x', ''),
    ),
  });
  it('round-trips with escaping', () => {
    fc.assert(
      fc.property(fc.array(fieldReq, { maxLength: 5 }), (reqs) => {
        const text = serializeFieldSelector(reqs);
        const parsed = parseFieldSelector(text);
        const key = (r: FieldRequirement) => `${r.field}\u0000${r.operator}\u0000${r.value}`;
        expect(parsed.map(key).sort()).toEqual(reqs.map(key).sort());
        expect(parseFieldSelector(serializeFieldSelector(parsed))).toEqual(parsed);
      }),
      { numRuns: 5000 },
    );
  });
  it('escape/unescape are inverse', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(unescapeFieldValue(escapeFieldValue(s))).toBe(s);
      }),
    );
  });
  it('parses like fields.ParseSelector', () => {
    expect(parseFieldSelector('b=1,a!=2,,c==3')).toEqual([
      { field: 'a', operator: '!=', value: '2' },
      { field: 'b', operator: '=', value: '1' },
      { field: 'c', operator: '=', value: '3' },
    ]);
    expect(parseFieldSelector('a=x\\,y\\=z\\\\')).toEqual([{ field: 'a', operator: '=', value: 'x,y=z\\' }]);
    expect(parseFieldSelector('a=!b')).toEqual([{ field: 'a', operator: '=', value: '!b' }]);
    expect(parseFieldSelector('')).toEqual([]);
    const bad: Array<[string, string]> = [
      ['abc', "invalid selector: 'abc'; can't understand 'abc'"],
      ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
      ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
      ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
    ];
    for (const [s, msg] of bad) expect(() => parseFieldSelector(s), s).toThrow(msg);
  });
  it('garbage throws only SelectorError, and what parses is a fixed point', () => {
    const seen = { parsed: 0, refused: 0 };
    fc.assert(
      fc.property(fieldSelectorGarbage, (s) => {
        let reqs: FieldRequirement[];
        try {
          reqs = parseFieldSelector(s);
        } catch (e) {
          seen.refused++;
          expect(e).toBeInstanceOf(SelectorError);
          expect((e as SelectorError).status.code).toBe(400);
          return;
        }
        seen.parsed++;
        // what parses serializes to a selector that parses to the same terms (order aside: terms are
        // sorted by their raw text, which serializing normalizes)
        const terms = (rs: FieldRequirement[]) => rs.map((r) => JSON.stringify(r)).sort();
        expect(terms(parseFieldSelector(serializeFieldSelector(reqs)))).toEqual(terms(reqs));
      }),
      { numRuns: 10000 },
    );
    expect(seen.parsed).toBeGreaterThan(500);
    expect(seen.refused).toBeGreaterThan(500);
  });
});
