/**
 * Namespaces by fleet name. `kubectl get ns` lists member2's `shop` as `shop.clusterspace.member2` (a
 * Namespace is an object like any other in the fleet view), and kubectl, kubens and every client hand
 * that name back as the namespace: `kubectl get pods -n shop.clusterspace.member2`. So a namespace path
 * segment carrying a fleet name means that cluster's namespace: the request is member2's alone (its
 * clusterspace becomes the cluster), and the namespace goes upstream plain. Objects in the answer keep
 * their usual fleet names.
 *
 * No real namespace can be mistaken for one: namespace names are DNS-1123 labels (no dots), so
 * `<ns>.clusterspace.<cluster>` is never a namespace of any cluster. The Namespace object itself
 * (`/api/v1/namespaces/<name>`) is named by its fleet name like any object: src/plan/owner.ts.
 *
 * Pure: no I/O; a contradiction is a 400 Status returned.
 */
import { badRequest, type Status } from '../kube/status.ts';
import { decodeName } from '../merge/names.ts';
import type { RequestInfo } from '../request/info.ts';

export interface FleetNamespace {
  /** the request as that cluster's: plain namespace (in `kubePath` too), the cluster as clusterspace */
  info: RequestInfo;
  cluster: string;
  /** the namespace as the client wrote it */
  fleet: string;
}

/**
 * The cluster a request's namespace names, and the request rewritten for it; undefined when the
 * namespace is plain (or the request is about a Namespace object itself). A fleet name whose cluster
 * contradicts the clusterspace the URL names is a 400.
 */
export function fleetNamespace(info: RequestInfo): FleetNamespace | Status | undefined {
  if (!info.isResourceRequest || !info.namespace) return undefined;
  if (info.apiPrefix === 'api' && info.resource === 'namespaces') return undefined;
  const d = decodeName(info.namespace);
  if (d.cluster === undefined) return undefined;
  const cs = info.clusterspace ?? 'all';
  if (cs !== 'all' && cs !== d.cluster)
    return badRequest(
      `the namespace "${info.namespace}" names cluster "${d.cluster}", which contradicts the clusterspace "${cs}"`,
    );
  return {
    info: {
      ...info,
      namespace: d.name,
      clusterspace: d.cluster,
      kubePath: withPlainNamespace(info.kubePath, info.namespace, d.name),
    },
    cluster: d.cluster,
    fleet: info.namespace,
  };
}

/** `kubePath` (percent-encoded) with its namespace segment `fleet` replaced by `plain`. */
function withPlainNamespace(kubePath: string, fleet: string, plain: string): string {
  const segs = kubePath.split('/');
  for (let i = 1; i + 1 < segs.length; i++) {
    if (segs[i] !== 'namespaces') continue;
    let seg: string;
    try {
      seg = decodeURIComponent(segs[i + 1]!);
    } catch {
      continue;
    }
    if (seg !== fleet) continue;
    segs[i + 1] = encodeURIComponent(plain);
    return segs.join('/');
  }
  return kubePath;
}

/**
 * A body's `metadata.namespace` for the cluster a request went to: a fleet name of that cluster becomes
 * the plain namespace; a fleet name of another cluster is a 400; a plain one stays (the cluster checks it
 * against the URL, as kube-apiserver does). `urlNamespace` is the plain namespace the request addresses.
 */
export function bodyNamespace(
  value: string,
  cluster: string,
  urlNamespace: string,
): { namespace: string } | Status {
  const d = decodeName(value);
  if (d.cluster === undefined) return { namespace: value };
  if (d.cluster !== cluster)
    return badRequest(
      `metadata.namespace "${value}" names cluster "${d.cluster}", but the request goes to cluster "${cluster}"` +
        (urlNamespace ? ` (namespace "${urlNamespace}")` : ''),
    );
  return { namespace: d.name };
}
