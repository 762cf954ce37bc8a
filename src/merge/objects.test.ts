import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toFleetItemText, toFleetObject } from './objects.ts';

const view = { federation: true };
const rv = (own: string) => `9${own}`;

describe('toFleetItemText', () => {
  it('gives the same object as a full parse-and-rewrite, for any item', () => {
    const meta = fc.record(
      {
        name: fc.string(),
        namespace: fc.string(),
        resourceVersion: fc.stringMatching(/^[1-9][0-9]{0,8}$/),
        labels: fc.dictionary(fc.string(), fc.string()),
        annotations: fc.dictionary(fc.string(), fc.string()),
        ownerReferences: fc.array(fc.record({ name: fc.string(), kind: fc.string() })),
      },
      { requiredKeys: [] },
    );
    const item = fc.record(
      {
        apiVersion: fc.string(),
        kind: fc.string(),
        metadata: meta,
        spec: fc.jsonValue(),
        status: fc.jsonValue(),
        involvedObject: fc.record({ name: fc.string() }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(item, fc.constantFrom('member1', 'karmada'), fc.boolean(), (obj, cluster, pretty) => {
        const text = JSON.stringify(obj, null, pretty ? 2 : undefined);
        const spliced = JSON.parse(toFleetItemText(view, text, cluster, rv));
        const full = toFleetObject(view, JSON.parse(text), cluster, rv);
        expect(spliced).toEqual(full);
      }),
      { numRuns: 3000 },
    );
  });

  it('copies everything but metadata byte for byte', () => {
    const text =
      '{"metadata":{"name":"web","resourceVersion":"7"},"spec":{"x":1.50,"y":"\\u00e9"},"status":{}}';
    const out = toFleetItemText(view, text, 'member2', rv);
    expect(out.endsWith(',"spec":{"x":1.50,"y":"\\u00e9"},"status":{}}')).toBe(true);
    expect(JSON.parse(out).metadata).toEqual({
      name: 'web.clusterspace.member2',
      resourceVersion: '97',
      annotations: { 'fleet.karmada.io/cluster': 'member2' },
      labels: { 'fleet.karmada.io/cluster': 'member2' },
    });
  });
});
