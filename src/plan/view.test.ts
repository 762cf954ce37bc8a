/**
 * An object answers under the name it was asked by (plan/view.ts, docs/names.md): for every scope form
 * and every name shape, the request is planned as the routes plan it (path → RequestInfo → namespace by
 * fleet name → owner), the cluster's answer (the object by its plain name, one list item as the merge
 * writes it, a Status naming it, client-side apply's record of it) is shown in the answer's view, and the name comes back as the request spelled it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { notFound } from '../kube/status.ts';
import { itemView, writeFleetItem } from '../merge/itembytes/index.ts';
import { ListSplitter } from '../merge/jsonsplit/index.ts';
import { encodeName, rewriteStatusNames } from '../merge/names/index.ts';
import { fleetName, toFleetObject } from '../merge/objects/index.ts';
import { LAST_APPLIED } from '../merge/objects/lastapplied.ts';
import { parseRequestInfo } from '../request/info.ts';
import { ByteSink } from '../util/bytes.ts';
import { fleetNamespace } from './namespace.ts';
import { ownerOf, plainNameClusterFor } from './owner.ts';
import { answerView, selectedName } from './view.ts';

const CLUSTERS = ['karmada', 'member1', 'member2'];
const enc = new TextEncoder();
const dec = new TextDecoder();

/** the scope forms the fleet route serves (the `/clusterspaces/<member>/` prefix is a transparent proxy) */
const scopes = [
  { form: 'root', cluster: undefined, path: (n: string) => `/api/v1/namespaces/default/configmaps/${n}` },
  {
    form: '/clusterspaces/all prefix',
    cluster: undefined,
    path: (n: string) => `/clusterspaces/all/api/v1/namespaces/default/configmaps/${n}`,
  },
  {
    form: 'namespace by fleet name',
    cluster: 'member2',
    path: (n: string) => `/api/v1/namespaces/default.clusterspace.member2/configmaps/${n}`,
  },
  {
    form: 'in-path, namespaced',
    cluster: 'member2',
    path: (n: string) => `/api/v1/namespaces/default/clusterspaces/member2/configmaps/${n}`,
  },
  {
    form: 'in-path, cluster scope',
    cluster: 'member1',
    path: (n: string) => `/apis/rbac.authorization.k8s.io/v1/clusterspaces/member1/clusterroles/${n}`,
  },
  {
    form: 'in-path, the control plane',
    cluster: 'karmada',
    path: (n: string) => `/api/v1/namespaces/default/clusterspaces/karmada/configmaps/${n}`,
  },
] as const;

const short = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,40}[a-z0-9])?$/);
const long = fc
  .tuple(fc.stringMatching(/^[a-z0-9]{1,10}$/), fc.integer({ min: 192, max: 253 }))
  .map(([s, n]) => s.repeat(Math.ceil(n / s.length)).slice(0, n));
/** a name shape: plain (short or long), or the fleet name of an object of `cluster` (long ones shortened) */
const shapes = fc.constantFrom('plain', 'fleet');

/** the request for `spelled` planned and answered as the routes do; the names the client sees */
function roundTrip(scope: (typeof scopes)[number], spelled: string, federation: boolean) {
  const asked = parseRequestInfo('GET', scope.path(encodeURIComponent(spelled)), new URLSearchParams());
  const byName = fleetNamespace(asked);
  if (byName && 'code' in byName) throw new Error(byName.message);
  const info = byName ? byName.info : asked;
  const cs = info.clusterspace ?? 'all';
  const targets = (cs === 'all' ? CLUSTERS : [cs]).map((cluster) => ({ cluster }));
  const view = answerView(federation, info, info.name);
  const owner = ownerOf(view, info, targets, plainNameClusterFor({ federation }, cs, targets));
  if ('code' in owner || 'search' in owner) throw new Error(`no owner for ${spelled}`);
  const cluster = owner.target.cluster;
  const record = `${JSON.stringify({ kind: 'ConfigMap', metadata: { name: owner.plain } })}\n`;
  const stored = () => ({
    kind: 'ConfigMap',
    metadata: { name: owner.plain, namespace: 'default', annotations: { [LAST_APPLIED]: record } },
  });
  const object = toFleetObject(view, stored(), cluster);
  // the same object as a list item of a collection asking for it by a metadata.name field selector
  const q = new URLSearchParams({ fieldSelector: `metadata.name=${spelled}` });
  const listView = answerView(federation, info, selectedName(q));
  let item: any;
  new ListSplitter().push(enc.encode(`{"kind":"List","items":[${JSON.stringify(stored())}]}`), (e) => {
    if (e.type !== 'item' || !e.facts) return;
    const sink = new ByteSink(16);
    // as the merge writes it: from its bytes, or parsed when the byte path leaves it (listmerge.ts)
    item = writeFleetItem(sink, e.bytes, e.facts, itemView(listView, cluster))
      ? JSON.parse(dec.decode(sink.take()))
      : toFleetObject(listView, JSON.parse(dec.decode(e.bytes)), cluster);
  });
  const status = rewriteStatusNames(
    notFound('configmaps', '', owner.plain),
    owner.plain,
    fleetName(view, owner.plain, cluster),
  );
  return {
    cluster,
    names: [
      object.metadata.name,
      JSON.parse(object.metadata.annotations[LAST_APPLIED]).metadata.name,
      item.metadata.name,
      JSON.parse(item.metadata.annotations[LAST_APPLIED]).metadata.name,
      status.details?.name,
    ],
    message: status.message,
  };
}

describe('an object answers under the name it was asked by', () => {
  for (const scope of scopes)
    it(`in the scope form "${scope.form}", for plain, fleet and shortened names`, () => {
      fc.assert(
        fc.property(fc.oneof(short, long), shapes, fc.boolean(), (name, shape, federation) => {
          // at the root a plain name means the control plane with federation on (off: it is looked for)
          if (scope.cluster === undefined && shape === 'plain' && !federation) return;
          const owner = scope.cluster ?? (shape === 'plain' ? 'karmada' : 'member2');
          const spelled = shape === 'plain' ? name : encodeName(name, owner);
          const got = roundTrip(scope, spelled, federation);
          expect(got.cluster).toBe(owner);
          expect(got.names).toEqual(Array(5).fill(spelled));
          expect(got.message).toBe(`configmaps "${spelled}" not found`);
        }),
        { numRuns: 150 },
      );
    });

  it('a collection in a scope that names its cluster shows plain names; at the root, fleet names', () => {
    for (const scope of scopes) {
      const info = parseRequestInfo('GET', scope.path('').replace(/\/$/, ''), new URLSearchParams());
      const byName = fleetNamespace(info);
      const view = answerView(false, byName && !('code' in byName) ? byName.info : info);
      const cluster = scope.cluster ?? 'member2';
      expect(fleetName(view, 'web', cluster), scope.form).toBe(
        scope.cluster ? 'web' : 'web.clusterspace.member2',
      );
      // another cluster's names (a reference can only name its own cluster's, but the rule is per cluster)
      expect(fleetName(view, 'web', 'member3')).toBe('web.clusterspace.member3');
    }
  });
});
