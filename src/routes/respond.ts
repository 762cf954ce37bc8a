/**
 * Helpers the fleet routes share to read upstream answers and write their own. Not a route: any route
 * may import it, and it imports no route.
 */
import type { FleetConfig } from '../config/schema.ts';
import { kubeJson } from '../kube/json.ts';
import { failure, type Status, statusOfAnswer, statusResponse } from '../kube/status.ts';
import { rewriteStatusNames } from '../merge/names/index.ts';
import { type FleetView, fleetName, toFleetObject } from '../merge/objects/index.ts';
import { compositeWith, prepareMembership } from '../merge/rv/index.ts';
import { mergeColumns, toFleetRow } from '../merge/table/index.ts';
import { type AskedNamespace, showAskedNamespace } from '../plan/namespace.ts';
import type { ClientDeps } from '../types.ts';
import { forwardableResponseHeaders } from '../upstreams/client.ts';

const encoder = new TextEncoder();

/**
 * A response whose body is produced piece by piece. Each piece is sent as it comes (no buffering); when
 * the client goes away the generator is closed, so whatever it holds (upstream bodies) is released.
 */
export function streamResponse(body: AsyncGenerator<string>, status: number, headers: Headers): Response {
  return new Response(generatorStream(body), { status, headers });
}

export function generatorStream(body: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const r = await body.next();
        if (r.done) controller.close();
        else controller.enqueue(encoder.encode(r.value));
      } catch (err) {
        // the response has started: the only honest signal left is a broken body
        console.error('fleet: merged response failed mid-stream:', (err as Error).message);
        controller.error(err);
      }
    },
    async cancel() {
      await body.return(undefined);
    },
  });
}

/** 404 for a clusterspace that names no cluster, listing the ones that exist. */
export async function unknownClusterspace(
  deps: Pick<ClientDeps, 'membership'>,
  cs: string,
  signal: AbortSignal,
): Promise<Response> {
  const names = ['all', 'karmada', ...(await deps.membership.members(signal)).map((m) => m.name)];
  return statusResponse(
    failure(404, 'NotFound', `clusterspace "${cs}" not found; known clusterspaces: ${names.join(', ')}`, {
      name: cs,
      kind: 'clusterspaces',
    }),
  );
}

/**
 * An upstream answer about one object (or one cluster's list of them), shown in the fleet view: names,
 * composite RVs, the cluster label and Table rows. A Status names the object by its fleet name. `raw`
 * (logs, proxy): a successful body is relayed byte for byte, streaming.
 */
export async function fleetAnswer(
  view: FleetView,
  membership: readonly string[],
  cluster: string,
  plain: string,
  res: Response,
  raw = false,
  ns?: AskedNamespace,
): Promise<Response> {
  const fleet = fleetName(view, plain, cluster);
  if (raw && res.ok) {
    const headers = forwardableResponseHeaders(res.headers);
    if (!res.headers.has('content-length')) headers.set('Content-Encoding', 'identity');
    return new Response(res.body, { status: res.status, headers });
  }
  const headers = forwardableResponseHeaders(res.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  // an error answer without a Status (a proxy's bodyless 431, a text 404 or 502 page): kube's generic
  // Status for its code, as client-go would read it
  if (res.status >= 400 && body?.kind !== 'Status') {
    body = statusOfAnswer(res.status, text);
    headers.set('Content-Type', 'application/json');
  } else if (body === undefined) return new Response(text, { status: res.status, headers });
  if (body?.kind === 'Status') body = rewriteStatusNames(body as Status, plain, fleet);
  else if (res.ok && body && typeof body === 'object') toFleetBody(view, membership, cluster, body, ns);
  return new Response(kubeJson(body), { status: res.status, headers });
}

/** One cluster's object, Table or list, rewritten in place into the fleet view. */
function toFleetBody(
  view: FleetView,
  membership: readonly string[],
  cluster: string,
  body: any,
  ns: AskedNamespace | undefined,
): void {
  const m = prepareMembership(membership);
  const base = new Map(m.names.map((n) => [n, '']));
  const rvFor = compositeWith(m, base, cluster);
  if (body.kind === 'Table' && Array.isArray(body.rows)) {
    const merged = mergeColumns([body.columnDefinitions]);
    body.columnDefinitions = merged.columns;
    body.rows = body.rows.map((r: any) => toFleetRow(view, r, merged, 0, cluster, rvFor));
    if (body.metadata?.resourceVersion) body.metadata.resourceVersion = rvFor(body.metadata.resourceVersion);
    if (ns) for (const r of body.rows) showAskedNamespace(r, ns);
  } else if (Array.isArray(body.items)) {
    // one cluster's list (deletecollection answers with the deleted items)
    for (const item of body.items) toFleetObject(view, item, cluster, rvFor);
    if (body.metadata?.resourceVersion) body.metadata.resourceVersion = rvFor(body.metadata.resourceVersion);
    if (ns) for (const item of body.items) showAskedNamespace(item, ns);
  } else {
    toFleetObject(view, body, cluster, rvFor);
    if (ns) showAskedNamespace(body, ns);
  }
}

/** What the body-idle timeout is read from; configs built in code (tests, embedders) may leave it out. */
export interface BodyIdleDeps {
  config: { timeouts?: Partial<Pick<FleetConfig['timeouts'], 'bodyIdleSeconds'>> };
}

/** `timeouts.bodyIdleSeconds` in ms (the schema's default, 10 s, when a config built in code has none). */
export function bodyIdleMs(deps: BodyIdleDeps): number {
  return (deps.config.timeouts?.bodyIdleSeconds ?? 10) * 1000;
}
