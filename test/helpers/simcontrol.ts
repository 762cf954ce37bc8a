/**
 * A small control URL for programs in other languages (the Go client-go tests) that need the simulated
 * clusters to change under them mid-run: write or remove an object in one cluster, cut its watches,
 * expire its history (the next resume is a 410), take it down and up (a restart), a member joining or
 * leaving. `POST <url>/<op>` with a JSON body; the answer is JSON (`{ "error": … }` with status 400 on a
 * bad request). Ops:
 *
 *   namespace {name}                         the namespace in the control plane and every member
 *   put {cluster, resource, ns, name, object?, data?, labels?}   create, or update `data`/`labels` and
 *                                            `object`'s top-level fields
 *   remove {cluster, resource, ns, name}
 *   get {cluster, resource, ns, name}        the object, or null
 *   list {resource, ns}                      [{cluster, name, resourceVersion, data?, labels?}] in every cluster
 *   cut|expire|down|up {cluster}             watches cut / history compacted and watches cut / unreachable / back
 *   join {cluster, crds?} | leave {cluster}  a member joins (empty, with the test namespaces) or leaves
 *   crd {cluster, present}                   the Gadget CRD (group gadgets.fleet.io) installed in or removed
 *                                            from one cluster (test/real/control.ts does it on the real bed)
 *   fault {cluster, on: watch|list, fault}   (a fault fleet only) the cluster's next watch or list request
 *                                            gets `fault` from its fault proxy (test/faults/faults.ts)
 *   calm {}                                  (a fault fleet only) the faults armed and not yet applied go
 */
import type { ServedSimFleet } from '../../deploy/node/demo.ts';
import { type KubeObject, SimCluster } from '../../sim/index.ts';
import type { Fault } from '../faults/faults.ts';
import type { ClusterTap } from '../faults/fleet.ts';
import type { RuleHandle } from '../faults/proxy.ts';
import {
  CONTROL_RESOURCES,
  type ControlOp,
  type ControlServer,
  controlListEntry,
  serveControl,
} from './control-server.ts';

const RESOURCES = CONTROL_RESOURCES;

export type SimControl = ControlServer;

export async function serveSimControl(
  sims: () => ServedSimFleet,
  /** a fault fleet's clusters (`fault` answers 400 without) */
  taps?: (cluster: string) => ClusterTap,
): Promise<SimControl> {
  const namespaces = new Set<string>();
  /** members that joined through `join`, closed when they leave or the control URL closes */
  const joined = new Map<string, SimCluster>();
  /** faults armed through `fault`, removed by `calm` (each applies once; one no request met stays armed) */
  const armed: RuleHandle[] = [];
  const cluster = (name: unknown): SimCluster => {
    const s = sims();
    const c = name === 'karmada' ? s.karmada : s.members.get(String(name));
    if (!c) throw new Error(`no cluster ${String(name)}`);
    return c;
  };
  const clusters = (): Array<[string, SimCluster]> => [['karmada', sims().karmada], ...sims().members];
  const gvr = (r: unknown) => {
    const g = RESOURCES[String(r)];
    if (!g) throw new Error(`unknown resource ${String(r)}`);
    return g;
  };
  const serves = (c: SimCluster, g: { group: string; version: string; resource: string }) => {
    try {
      c.resolve(g);
      return true;
    } catch {
      return false;
    }
  };
  const ensureNs = (c: SimCluster, name: string) => {
    if (!c.get(RESOURCES.namespaces!, undefined, name))
      c.create(RESOURCES.namespaces!, { metadata: { name } });
  };

  const ops: Record<string, ControlOp> = {
    namespace: (a) => {
      namespaces.add(String(a.name));
      for (const [, c] of clusters()) ensureNs(c, String(a.name));
      return {};
    },
    put: (a) => {
      const c = cluster(a.cluster);
      const g = gvr(a.resource);
      const cur = c.get(g, a.ns, String(a.name));
      const labels = a.labels as Record<string, string> | undefined;
      if (cur) {
        const next = {
          ...cur,
          // `object`'s top-level fields other than metadata replace the live ones (e.g. a whole spec)
          ...(a.object ? Object.fromEntries(Object.entries(a.object).filter(([k]) => k !== 'metadata')) : {}),
          metadata: { ...cur.metadata, ...(labels ? { labels: { ...cur.metadata.labels, ...labels } } : {}) },
          ...(a.data ? { data: a.data } : {}),
        } as KubeObject;
        return c.update(g, next);
      }
      const body = (a.object as KubeObject | undefined) ?? ({ data: a.data ?? {} } as unknown as KubeObject);
      return c.create(g, {
        ...body,
        metadata: { ...body.metadata, name: String(a.name), namespace: a.ns, ...(labels ? { labels } : {}) },
      } as KubeObject);
    },
    remove: (a) => {
      cluster(a.cluster).remove(gvr(a.resource), a.ns, String(a.name));
      return {};
    },
    get: (a) => cluster(a.cluster).get(gvr(a.resource), a.ns, String(a.name)) ?? null,
    list: (a) =>
      clusters().flatMap(([name, c]) =>
        // clusters that do not serve the resource (a CRD) hold none of it
        (serves(c, gvr(a.resource)) ? c.list(gvr(a.resource), a.ns) : []).map((o) =>
          controlListEntry(name, o),
        ),
      ),
    cut: (a) => {
      cluster(a.cluster).cutWatches();
      return {};
    },
    expire: (a) => {
      const c = cluster(a.cluster);
      c.compact();
      c.cutWatches();
      return {};
    },
    down: (a) => {
      const c = cluster(a.cluster);
      c.faults.down = true;
      c.cutWatches();
      return {};
    },
    up: (a) => {
      cluster(a.cluster).faults.down = false;
      return {};
    },
    join: (a) => {
      const name = String(a.cluster);
      const m = new SimCluster({ name, seed: false, crds: !!a.crds });
      for (const ns of namespaces) ensureNs(m, ns);
      sims().karmada.addMember(name, m);
      joined.set(name, m);
      return {};
    },
    crd: (a) => {
      cluster(a.cluster).serveGadgets(Boolean(a['present']));
      return {};
    },
    fault: (a) => {
      if (!taps) throw new Error('no fault proxies in front of these clusters');
      const watch = a['on'] === 'watch';
      if (!watch && a['on'] !== 'list') throw new Error(`fault on ${String(a['on'])}: watch or list`);
      armed.push(
        taps(String(a.cluster)).on(
          { method: 'GET', query: { watch: watch ? 'true' : false } },
          a['fault'] as Fault,
        ),
      );
      return {};
    },
    calm: () => {
      for (const h of armed.splice(0)) h.remove();
      return {};
    },
    leave: (a) => {
      const name = String(a.cluster);
      sims().karmada.removeMember(name);
      joined.get(name)?.close();
      joined.delete(name);
      return {};
    },
  };

  return serveControl(ops, '', () => {
    for (const m of joined.values()) m.close();
  });
}
