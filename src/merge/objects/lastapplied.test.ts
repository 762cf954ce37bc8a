/**
 * Client-side apply's record shown as the object is (lastapplied.ts): only metadata.name and
 * metadata.namespace change, every other character of the record stays as it was written, whatever the
 * encoder's spacing, escapes or key order; list items give the record toFleetObject gives (the byte path
 * leaves them to it).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looseJson, seeded } from '../../../test/helpers/loosejson.ts';
import { ByteSink } from '../../util/bytes.ts';
import { itemView, writeFleetItem } from '../itembytes/index.ts';
import { ListSplitter } from '../jsonsplit/index.ts';
import { objectForCluster } from '../writes.ts';
import { keepsPlainNames, toFleetObject } from './index.ts';
import { LAST_APPLIED, showLastApplied } from './lastapplied.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** what kubectl 1.35 writes: compact JSON and a newline */
const kubectlRecord = (name: string, namespace?: string) =>
  `{"apiVersion":"v1","data":{"big":12345678901234567890,"mode":"\\u003cblue\\u003e"},"kind":"ConfigMap",` +
  `"metadata":{"annotations":{},"name":${JSON.stringify(name)}${namespace ? `,"namespace":${JSON.stringify(namespace)}` : ''}}}\n`;

describe('showLastApplied', () => {
  it('shows the name and the namespace, and keeps every other byte (numbers past 2^53, the newline)', () => {
    const rec = kubectlRecord('web', 'shop');
    const out = showLastApplied(rec, {
      name: { plain: 'web', shown: 'web.clusterspace.member2' },
      namespace: { plain: 'shop', shown: 'shop.clusterspace.member2' },
    });
    expect(out).toBe(
      rec
        .replace('"name":"web"', '"name":"web.clusterspace.member2"')
        .replace('"namespace":"shop"', '"namespace":"shop.clusterspace.member2"'),
    );
    expect(out).toContain('12345678901234567890');
    expect(out!.endsWith('}\n')).toBe(true);
  });

  it('changes nothing that is not the object’s own name: another name, nested names, not JSON', () => {
    const name = { plain: 'web', shown: 'web.clusterspace.member2' };
    expect(showLastApplied(kubectlRecord('other'), { name })).toBeUndefined();
    expect(showLastApplied('{"spec":{"metadata":{"name":"web"}}}', { name })).toBeUndefined();
    expect(showLastApplied('{"metadata":{"labels":{"name":"web"}}}', { name })).toBeUndefined();
    for (const bad of ['', 'web', '[1]', '{"metadata":', '{"metadata":{"name":"web"', 'null'])
      expect(showLastApplied(bad, { name })).toBeUndefined();
    expect(showLastApplied(kubectlRecord('web'), { name: { plain: 'web', shown: 'web' } })).toBeUndefined();
  });

  it('for random records written loosely: the shown record parses to the original with the name changed', () => {
    const name = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,30}[a-z0-9])?$/);
    fc.assert(
      fc.property(name, fc.boolean(), fc.jsonValue({ maxDepth: 3 }), fc.integer(), (n, own, data, seed) => {
        const inner = {
          kind: 'X',
          spec: { metadata: { name: n } },
          metadata: { name: own ? n : `${n}x`, data },
        };
        const rec = looseJson(inner, seeded(seed), { keyEscapes: 0.1 });
        const out = showLastApplied(rec, { name: { plain: n, shown: `${n}.clusterspace.m` } });
        if (!own) {
          expect(out).toBeUndefined();
          return;
        }
        const want = structuredClone(JSON.parse(rec));
        want.metadata.name = `${n}.clusterspace.m`;
        expect(JSON.parse(out!)).toEqual(want);
        // only the name's token changed
        expect(out!.length - rec.length).toBeLessThanOrEqual('.clusterspace.m'.length);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the record in list items', () => {
  const item = (name: string, rec: string, extra: Record<string, string> = {}) =>
    JSON.stringify({
      kind: 'ConfigMap',
      metadata: { name, namespace: 'shop', annotations: { ...extra, [LAST_APPLIED]: rec } },
    });

  it('gives what toFleetObject gives: the fleet name at the root, the plain name in a scope of its cluster', () => {
    const views = [
      { federation: true },
      { federation: false },
      { federation: true, scope: 'member2' },
      { federation: false, scope: 'member1' },
    ];
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/),
        fc.boolean(),
        fc.constantFrom(...views),
        fc.constantFrom('member2', 'karmada'),
        fc.integer(),
        fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
        (name, own, view, cluster, seed, extra) => {
          const rec = looseJson({ kind: 'ConfigMap', metadata: { name: own ? name : 'zz' } }, seeded(seed));
          const body = enc.encode(`{"kind":"List","items":[${item(name, `${rec}\n`, extra)}]}`);
          const want = JSON.stringify(
            toFleetObject(view, JSON.parse(item(name, `${rec}\n`, extra)), cluster),
          );
          const iv = itemView(view, cluster);
          let got: string | undefined;
          new ListSplitter().push(body, (e) => {
            if (e.type !== 'item' || !e.facts) return;
            const sink = new ByteSink(16);
            // the byte path leaves an item with a record to parsing, unless its names stay as they are
            const bytes = writeFleetItem(sink, e.bytes, e.facts, iv);
            expect(bytes).toBe(keepsPlainNames(view, cluster));
            got = bytes
              ? dec.decode(sink.take())
              : JSON.stringify(toFleetObject(view, JSON.parse(dec.decode(e.bytes)), cluster));
          });
          expect(got).toBeDefined();
          expect(JSON.stringify(JSON.parse(got!))).toBe(want);
          const shown = JSON.parse(got!).metadata;
          const recName = JSON.parse(shown.annotations[LAST_APPLIED]).metadata.name;
          expect(recName).toBe(own ? shown.name : 'zz');
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the record on the way in (writes.ts)', () => {
  const ctx = { cluster: 'member2', membership: ['karmada', 'member1', 'member2'] };
  const body = (ns: string) => ({
    metadata: {
      name: 'web.clusterspace.member2',
      annotations: {
        [LAST_APPLIED]: `{"metadata":{"name":"web.clusterspace.member2","namespace":"${ns}"}}\n`,
      },
    },
  });

  it('is stored as the cluster knows the object: plain name, plain namespace', () => {
    const r = objectForCluster(body('shop.clusterspace.member2'), ctx);
    expect(r.ok && JSON.parse(r.value.metadata.annotations[LAST_APPLIED]).metadata).toEqual({
      name: 'web',
      namespace: 'shop',
    });
  });

  it('refuses another cluster’s namespace in it (400), as in the object', () => {
    const r = objectForCluster(body('shop.clusterspace.member1'), ctx);
    expect(!r.ok && [r.status.code, r.status.message]).toEqual([
      400,
      expect.stringContaining('metadata.namespace'),
    ]);
  });
});
