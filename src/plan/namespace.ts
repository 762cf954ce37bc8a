/**
 * Namespaces by fleet name. `kubectl get ns` lists member2's `shop` as `shop.clusterspace.member2` (a
 * Namespace is an object like any other in the fleet view), and kubectl, kubens and every client hand
 * that name back as the namespace: `kubectl get pods -n shop.clusterspace.member2`. So a namespace path
 * segment carrying a fleet name means that cluster's namespace: the request is member2's alone (its
 * clusterspace becomes the cluster), and the namespace goes upstream plain. Objects in the answer show
 * that namespace as the client spelled it, and their plain names (plan/view.ts: the scope names the
 * cluster).
 *
 * No real namespace can be mistaken for one: namespace names are DNS-1123 labels (no dots), so
 * `<ns>.clusterspace.<cluster>` is never a namespace of any cluster. The Namespace object itself
 * (`/api/v1/namespaces/<name>`) is named by its fleet name like any object: src/plan/owner.ts.
 *
 * Pure: no I/O; a contradiction is a 400 Status returned.
 */
import { badRequest, type Status } from '../kube/status.ts';
import { decodeName } from '../merge/names/index.ts';
import { showRecordIn } from '../merge/objects/lastapplied.ts';
import type { RequestInfo } from '../request/info.ts';

/** A namespace the client named by its fleet name, beside the plain one the cluster knows. */
export interface AskedNamespace {
  plain: string;
  fleet: string;
}

/** A RequestInfo rewritten by {@link fleetNamespace}: it remembers the namespace as the client named it. */
export type NamespacedInfo = RequestInfo & { askedNamespace?: AskedNamespace };

export interface FleetNamespace {
  /** the request as that cluster's: plain namespace (in `kubePath` too), the cluster as clusterspace */
  info: NamespacedInfo;
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
      askedNamespace: { plain: d.name, fleet: info.namespace },
    },
    cluster: d.cluster,
    fleet: info.namespace,
  };
}

/** The namespace the client named by fleet name, when {@link fleetNamespace} rewrote the request. */
export function askedNamespace(info: RequestInfo): AskedNamespace | undefined {
  return (info as NamespacedInfo).askedNamespace;
}

/**
 * An answer to a request by fleet namespace says that namespace back: kubectl checks that what it gets is
 * in the namespace it asked for ("the namespace from the provided object "shop" does not match the
 * namespace "shop.clusterspace.member2""), and in the fleet view member2's `shop` is named so (`kubectl get
 * ns`). In place: an object, a list item, or a Table row's object; other namespaces are left alone.
 */
export function showAskedNamespace(obj: unknown, ns: AskedNamespace): void {
  if (!obj || typeof obj !== 'object') return;
  const o = obj as { metadata?: { namespace?: unknown; annotations?: unknown }; object?: unknown };
  if (o.metadata && typeof o.metadata === 'object' && o.metadata.namespace === ns.plain) {
    o.metadata.namespace = ns.fleet;
    // client-side apply's record says the namespace as kubectl was given it (merge/objects/lastapplied.ts)
    showRecordIn(o.metadata.annotations, { namespace: { plain: ns.plain, shown: ns.fleet } });
  }
  // a Table row: its object (full, or PartialObjectMetadata) carries the namespace
  if (o.object && typeof o.object === 'object') showAskedNamespace(o.object, ns);
}

/**
 * A watch stream (one JSON event per line) whose objects say the namespace as the client named it, as the
 * list it started from did (an informer keys its cache by namespace/name: both must agree). Each line goes
 * on as soon as it is complete, so events stream as before; lines that are not events pass unchanged.
 */
export function askedNamespaceLines(ns: AskedNamespace): TransformStream<Uint8Array, Uint8Array> {
  const dec = new TextDecoder();
  const enc = new TextEncoder();
  let rest = '';
  const line = (text: string): string => {
    try {
      const event = JSON.parse(text) as { object?: { rows?: unknown[] } };
      const obj = event?.object;
      if (!obj || typeof obj !== 'object') return text;
      showAskedNamespace(obj, ns);
      // a Table watch event: its rows' objects
      if (Array.isArray(obj.rows)) for (const r of obj.rows) showAskedNamespace(r, ns);
      return JSON.stringify(event);
    } catch {
      return text;
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      rest += dec.decode(chunk, { stream: true });
      let out = '';
      for (let i = rest.indexOf('\n'); i >= 0; i = rest.indexOf('\n')) {
        out += `${line(rest.slice(0, i))}\n`;
        rest = rest.slice(i + 1);
      }
      if (out) controller.enqueue(enc.encode(out));
    },
    flush(controller) {
      rest += dec.decode();
      if (rest) controller.enqueue(enc.encode(line(rest)));
    },
  });
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
