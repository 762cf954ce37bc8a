import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFieldSelector } from '../kube/fields.ts';
import { SelectorError } from '../kube/selectors.ts';
import { rewriteFieldSelectorNames } from './fieldnames.ts';

/** Selector-shaped garbage around fleet names: mostly near misses, so that both outcomes occur. */
const garbage = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc
    .array(
      fc.constantFrom(
        'metadata.name',
        'involvedObject.name',
        'status.phase',
        '=',
        '==',
        '!=',
        ',',
        'web',
        '.clusterspace.',
        'm1',
        'm2',
        '\\',
        '\\,',
        '',
      ),
      { maxLength: 10 },
    )
    .map((a) => a.join('')),
);

describe('rewriteFieldSelectorNames on garbage', () => {
  it('throws only SelectorError, and forwards only selectors a cluster can parse', () => {
    const seen = { rewritten: 0, refused: 0 };
    fc.assert(
      fc.property(garbage, (s) => {
        let r: ReturnType<typeof rewriteFieldSelectorNames>;
        try {
          r = rewriteFieldSelectorNames(s);
        } catch (e) {
          seen.refused++;
          expect(e).toBeInstanceOf(SelectorError);
          return;
        }
        seen.rewritten++;
        if (r.matchesNothing) return;
        for (const c of ['m1', 'm2', 'karmada']) {
          const sent = r.forwardFor(c);
          expect(() => parseFieldSelector(sent), sent).not.toThrow();
        }
      }),
      { numRuns: 10000 },
    );
    expect(seen.rewritten).toBeGreaterThan(500);
    expect(seen.refused).toBeGreaterThan(500);
  });
});

describe('rewriteFieldSelectorNames', () => {
  it('pins the cluster of a fleet name and forwards the plain name', () => {
    const r = rewriteFieldSelectorNames(
      'involvedObject.name=web.clusterspace.m1,involvedObject.namespace=default',
    );
    expect(r.matchesNothing).toBe(false);
    if (!r.matchesNothing) {
      expect(r.cluster).toBe('m1');
      expect(r.forwardFor('m1')).toBe('involvedObject.name=web,involvedObject.namespace=default');
    }
    const m = rewriteFieldSelectorNames('metadata.name==api.clusterspace.m2');
    expect(!m.matchesNothing && m.cluster).toBe('m2');
    expect(!m.matchesNothing && m.forwardFor('m2')).toBe('metadata.name=api');
  });
  it('two different clusters match nothing', () => {
    expect(
      rewriteFieldSelectorNames('metadata.name=a.clusterspace.m1,involvedObject.name=b.clusterspace.m2'),
    ).toEqual({
      matchesNothing: true,
    });
    expect(
      rewriteFieldSelectorNames('metadata.name=a.clusterspace.m1', { plainNameCluster: 'karmada' })
        .matchesNothing,
    ).toBe(false);
    expect(
      rewriteFieldSelectorNames('metadata.name=a.clusterspace.m1,involvedObject.name=b', {
        plainNameCluster: 'karmada',
      }).matchesNothing,
    ).toBe(true);
  });
  it('!= applies only in the named cluster; plain names go everywhere', () => {
    const r = rewriteFieldSelectorNames(
      'metadata.name!=web.clusterspace.m1,status.phase=Running,metadata.namespace=x',
    );
    if (r.matchesNothing) throw new Error('unexpected');
    expect(r.cluster).toBeUndefined();
    expect(r.forwardFor('m1')).toBe('metadata.name!=web,metadata.namespace=x,status.phase=Running');
    expect(r.forwardFor('m2')).toBe('metadata.namespace=x,status.phase=Running');
    const p = rewriteFieldSelectorNames('metadata.name=web');
    expect(!p.matchesNothing && p.cluster).toBeUndefined();
    expect(!p.matchesNothing && p.forwardFor('m9')).toBe('metadata.name=web');
    const f = rewriteFieldSelectorNames('metadata.name=web', { plainNameCluster: 'karmada' });
    expect(!f.matchesNothing && f.cluster).toBe('karmada');
  });
  it('property: pinned cluster and plain names agree with the name codec', () => {
    const cluster = fc.stringMatching(/^m[0-9]$/);
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.stringMatching(/^[a-z]{1,5}$/),
            cluster,
            fc.constantFrom('metadata.name', 'involvedObject.name'),
          ),
          { maxLength: 3 },
        ),
        (terms) => {
          const sel = terms.map(([n, c, f]) => `${f}=${n}.clusterspace.${c}`).join(',');
          const r = rewriteFieldSelectorNames(sel);
          const cs = new Set(terms.map(([, c]) => c));
          if (cs.size > 1) expect(r.matchesNothing).toBe(true);
          else if (!r.matchesNothing) {
            expect(r.cluster).toBe(terms[0]?.[1]);
            const fwd = parseFieldSelector(r.forwardFor(r.cluster ?? 'm0'));
            expect(fwd.map((x) => x.value).sort()).toEqual(terms.map(([n]) => n).sort());
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
