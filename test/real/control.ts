/**
 * The control URL of test/helpers/simcontrol.ts for the real bed: the Go client-go tests (test/clientgo)
 * arrange and check what the clusters hold straight through each cluster's own API server, with its
 * admin certificate, never through a fleet. Ops as there: namespace, put, remove, get, list; plus
 * `crd {cluster, present}`, which installs (or removes) the Gadget CRD (group gadgets.fleet.io, an API
 * group no other cluster serves) in one cluster and answers once it is Established (or gone).
 *
 * The simulated clusters' knobs (cut, expire, down, up, join, leave, fault, calm) have no cheap real
 * equivalent on a shared bed (one etcd under every cluster); they answer 400, and the Go tests skip what
 * needs them when FLEET_BED=real, naming the reason.
 */
import { httpsRequest } from '../../testbed/process.ts';
import {
  CONTROL_RESOURCES,
  type ControlArgs,
  type ControlOp,
  type ControlServer,
  controlListEntry,
  serveControl,
} from '../helpers/control-server.ts';
import type { BedInfo, ClusterInfo } from './bed.ts';

const RESOURCES: Record<string, { group: string; version: string; resource: string; kind?: string }> = {
  ...CONTROL_RESOURCES,
  clusterrolebindings: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    resource: 'clusterrolebindings',
    kind: 'ClusterRoleBinding',
  },
  customresourcedefinitions: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
  },
};

type Obj = Record<string, any> & { metadata: Record<string, any> };
type Args = ControlArgs;

/** A CRD of `kind` (plural lower-case + s) in `group`, namespaced, any spec. */
export function crdObject(group: string, kind: string): Obj {
  const plural = `${kind.toLowerCase()}s`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          },
        },
      ],
    },
  };
}

/** One cluster of the bed spoken to directly, JSON in and out. */
export class RealCluster {
  /**
   * `controlPlane`: karmada-apiserver, which runs no serviceaccount controller (as in Karmada's own
   * manifests), so a namespace there gets no default ServiceAccount, and a pod without one is refused
   */
  constructor(
    readonly info: ClusterInfo,
    readonly controlPlane = false,
  ) {}

  path(resource: string, ns?: string, name?: string): string {
    const g = RESOURCES[resource];
    if (!g) throw new Error(`unknown resource ${resource}`);
    const base = g.group ? `/apis/${g.group}/${g.version}` : `/api/${g.version}`;
    return `${base}${ns ? `/namespaces/${ns}` : ''}/${g.resource}${name ? `/${name}` : ''}`;
  }

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const r = await httpsRequest(
      `${this.info.url}${path}`,
      { ca: this.info.ca, cert: this.info.admin.cert, key: this.info.admin.key },
      { method, body: body === undefined ? undefined : JSON.stringify(body), timeoutMs: 30_000 },
    );
    let parsed: any = r.body;
    try {
      parsed = JSON.parse(r.body);
    } catch {
      // not JSON: kept as text for the error
    }
    return { status: r.status, body: parsed };
  }

  async ok(method: string, path: string, body?: unknown): Promise<any> {
    const r = await this.call(method, path, body);
    if (r.status >= 300)
      throw new Error(`${this.info.name}: ${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  async get(resource: string, ns: string | undefined, name: string): Promise<Obj | null> {
    const r = await this.call('GET', this.path(resource, ns, name));
    if (r.status === 404) return null;
    if (r.status >= 300) throw new Error(`${this.info.name}: get ${resource} ${name}: ${r.status}`);
    return r.body as Obj;
  }

  /** The namespace, with its default ServiceAccount (the tests put pods in it, in every cluster). */
  async ensureNamespace(name: string): Promise<void> {
    const r = await this.call('POST', this.path('namespaces'), { metadata: { name } });
    if (r.status >= 300 && r.status !== 409)
      throw new Error(`${this.info.name}: namespace ${name}: ${r.status} ${JSON.stringify(r.body)}`);
    const sa = `/api/v1/namespaces/${name}/serviceaccounts`;
    if (this.controlPlane) {
      const s = await this.call('POST', sa, { metadata: { name: 'default' } });
      if (s.status >= 300 && s.status !== 409)
        throw new Error(`${this.info.name}: default ServiceAccount in ${name}: ${s.status}`);
    } else {
      // a member's controller makes it a moment after the namespace
      await this.until(`${sa}/default`, (x) => x.status === 200);
    }
  }

  /** As simcontrol's put: create, or update `data`/`labels` and `object`'s top-level fields (retried on a Conflict). */
  async put(a: Args): Promise<Obj> {
    const resource = String(a.resource);
    const labels = a.labels as Record<string, string> | undefined;
    for (let attempt = 0; ; attempt++) {
      const cur = await this.get(resource, a.ns, String(a.name));
      let r: { status: number; body: any };
      if (cur) {
        const next = {
          ...cur,
          ...(a.object ? Object.fromEntries(Object.entries(a.object).filter(([k]) => k !== 'metadata')) : {}),
          metadata: { ...cur.metadata, ...(labels ? { labels: { ...cur.metadata.labels, ...labels } } : {}) },
          ...(a.data ? { data: a.data } : {}),
        };
        r = await this.call('PUT', this.path(resource, a.ns, String(a.name)), next);
      } else {
        const body = (a.object as Obj | undefined) ?? { data: a.data ?? {}, metadata: {} };
        const g = RESOURCES[resource]!;
        r = await this.call('POST', this.path(resource, a.ns), {
          // a custom resource's body must name its kind (built-in kinds are defaulted)
          apiVersion: g.group ? `${g.group}/${g.version}` : g.version,
          kind: g.kind,
          ...body,
          metadata: {
            ...body.metadata,
            name: String(a.name),
            namespace: a.ns,
            ...(labels ? { labels } : {}),
          },
        });
      }
      // a controller (the deployment controller writing status) or a create racing ours: read again
      if (r.status === 409 && attempt < 20) continue;
      if (r.status >= 300)
        throw new Error(
          `${this.info.name}: put ${resource} ${String(a.name)}: ${r.status} ${JSON.stringify(r.body)}`,
        );
      return r.body as Obj;
    }
  }

  /** Waits until `check` holds for what GET `path` answers (polls every 0.2 s, up to 60 s). */
  async until(path: string, check: (r: { status: number; body: any }) => boolean): Promise<void> {
    const end = Date.now() + 60_000;
    for (;;) {
      if (check(await this.call('GET', path))) return;
      if (Date.now() > end) throw new Error(`${this.info.name}: ${path} not as wanted in 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Installs a CRD and waits until it is Established and its resource is served. */
  async installCrd(crd: Obj): Promise<void> {
    const r = await this.call('POST', this.path('customresourcedefinitions'), crd);
    if (r.status >= 300 && r.status !== 409)
      throw new Error(`${this.info.name}: crd ${crd.metadata.name}: ${r.status} ${JSON.stringify(r.body)}`);
    await this.until(this.path('customresourcedefinitions', undefined, crd.metadata.name), (x) =>
      (x.body?.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True'),
    );
    await this.until(`/apis/${crd.spec.group}/v1`, (x) => x.status === 200);
  }

  async removeCrd(name: string, group: string): Promise<void> {
    const r = await this.call('DELETE', this.path('customresourcedefinitions', undefined, name));
    if (r.status >= 300 && r.status !== 404)
      throw new Error(`${this.info.name}: delete crd ${name}: ${r.status}`);
    await this.until(`/apis/${group}/v1`, (x) => x.status === 404);
  }
}

export interface RealControl extends ControlServer {
  clusters: Map<string, RealCluster>;
}

/** The bed's clusters by the names the fleet gives them: `karmada` is karmada-apiserver, the control plane. */
export function realClusters(b: BedInfo): Map<string, RealCluster> {
  return new Map<string, RealCluster>([
    ['karmada', new RealCluster(b.karmadaApiserver, true)],
    ...b.members.map((m): [string, RealCluster] => [m.name, new RealCluster(m)]),
  ]);
}

export async function serveRealControl(b: BedInfo): Promise<RealControl> {
  const clusters = realClusters(b);
  const cluster = (name: unknown): RealCluster => {
    const c = clusters.get(String(name));
    if (!c) throw new Error(`no cluster ${String(name)}`);
    return c;
  };
  const gadgets = crdObject('gadgets.fleet.io', 'Gadget');

  const ops: Record<string, ControlOp> = {
    namespace: async (a) => {
      const ns = String(a.name);
      await Promise.all([...clusters.values()].map((c) => c.ensureNamespace(ns)));
      return {};
    },
    put: (a) => cluster(a.cluster).put(a),
    remove: async (a) => {
      const c = cluster(a.cluster);
      const r = await c.call('DELETE', c.path(String(a.resource), a.ns, String(a.name)));
      if (r.status >= 300 && r.status !== 404)
        throw new Error(`remove: ${r.status} ${JSON.stringify(r.body)}`);
      return {};
    },
    get: (a) => cluster(a.cluster).get(String(a.resource), a.ns, String(a.name)),
    list: async (a) => {
      const per = await Promise.all(
        [...clusters].map(async ([name, c]) => {
          const r = await c.call('GET', c.path(String(a.resource), a.ns));
          // a cluster that does not serve the resource (a CRD) holds none of it
          if (r.status === 404) return [];
          if (r.status >= 300) throw new Error(`${name}: list ${String(a.resource)}: ${r.status}`);
          return (r.body.items as Obj[]).map((o) => controlListEntry(name, o));
        }),
      );
      return per.flat();
    },
    crd: async (a) => {
      const c = cluster(a.cluster);
      if (a['present']) await c.installCrd(gadgets);
      else await c.removeCrd(gadgets.metadata.name, gadgets.spec.group);
      return {};
    },
  };

  return { ...(await serveControl(ops, ' on the real bed')), clusters };
}
