/**
 * Helpers the fleet routes share to read upstream answers and write their own. Not a route: any route
 * may import it, and it imports no route.
 */
import { failure, type Status, statusResponse } from '../kube/status.ts';
import { rewriteStatusNames } from '../merge/names.ts';
import { type FleetView, fleetName, toFleetObject } from '../merge/objects.ts';
import { compositeWith, prepareMembership } from '../merge/rv.ts';
import { mergeColumns, toFleetRow } from '../merge/table.ts';
import type { ClientDeps } from '../types.ts';
import { forwardableResponseHeaders } from '../upstreams/client.ts';

/** The Status in an upstream error body, or undefined when the body is not one (e.g. `404 page not found`). */
export async function readStatus(res: Response): Promise<Status | undefined> {
  const text = await res.text().catch(() => '');
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && v.kind === 'Status' ? (v as Status) : undefined;
  } catch {
    return undefined;
  }
}

const encoder = new TextEncoder();

/** kube-apiserver's threshold: answers smaller than this are never compressed (defaultGzipThresholdBytes). */
export const GZIP_THRESHOLD = 128 * 1024;

/** True when the client's Accept-Encoding allows gzip (q > 0). */
export function acceptsGzip(acceptEncoding: string | null): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Gzips a finite answer the way kube-apiserver does: only when the client accepts it and the body reaches
 * the threshold. The body is still streamed: the first 128 KiB are held to decide, then everything flows
 * through a CompressionStream. Never used for watch or log streams (they must flush per event).
 */
export async function gzipIfLarge(
  body: ReadableStream<Uint8Array>,
  status: number,
  headers: Headers,
): Promise<Response> {
  const reader = body.getReader();
  const held: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const r = await reader.read();
    if (r.done) {
      const all = new Uint8Array(size);
      let o = 0;
      for (const c of held) {
        all.set(c, o);
        o += c.length;
      }
      headers.set('Content-Length', String(size));
      return new Response(all, { status, headers });
    }
    held.push(r.value);
    size += r.value.length;
    if (size >= GZIP_THRESHOLD) break;
  }
  const rest = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of held) controller.enqueue(c);
      held.length = 0;
    },
    async pull(controller) {
      const r = await reader.read();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  headers.set('Content-Encoding', 'gzip');
  headers.delete('Content-Length');
  headers.append('Vary', 'Accept-Encoding');
  const gzip = new CompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>;
  return new Response(rest.pipeThrough(gzip), { status, headers });
}

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
    return new Response(text, { status: res.status, headers });
  }
  if (body?.kind === 'Status') body = rewriteStatusNames(body as Status, plain, fleet);
  else if (res.ok && body && typeof body === 'object') toFleetBody(view, membership, cluster, body);
  return new Response(JSON.stringify(body), { status: res.status, headers });
}

/** One cluster's object, Table or list, rewritten in place into the fleet view. */
function toFleetBody(view: FleetView, membership: readonly string[], cluster: string, body: any): void {
  const m = prepareMembership(membership);
  const base = new Map(m.names.map((n) => [n, '']));
  const rvFor = compositeWith(m, base, cluster);
  if (body.kind === 'Table' && Array.isArray(body.rows)) {
    const merged = mergeColumns([body.columnDefinitions]);
    body.columnDefinitions = merged.columns;
    body.rows = body.rows.map((r: any) => toFleetRow(view, r, merged, 0, cluster, rvFor));
    if (body.metadata?.resourceVersion) body.metadata.resourceVersion = rvFor(body.metadata.resourceVersion);
  } else if (Array.isArray(body.items)) {
    // one cluster's list (deletecollection answers with the deleted items)
    for (const item of body.items) toFleetObject(view, item, cluster, rvFor);
    if (body.metadata?.resourceVersion) body.metadata.resourceVersion = rvFor(body.metadata.resourceVersion);
  } else {
    toFleetObject(view, body, cluster, rvFor);
  }
}
