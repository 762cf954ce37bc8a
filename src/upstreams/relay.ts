/**
 * Fan-outs wider than the per-request connection budget (6 simultaneous outgoing connections per
 * request on Workers; more are queued until one closes).
 *
 * A merged list or watch holds one upstream connection per cluster until every head is in (lists) or for
 * as long as the client stays (watches): with 7+ clusters the 7th request would wait forever. So the fleet
 * splits the targets into groups and asks each group through a further invocation of itself (a service
 * binding to its own `FleetRelay` entrypoint, unreachable from outside). That invocation has a budget of
 * its own, sends the group's requests, and answers with one framed stream carrying every upstream answer
 * byte for byte; here the frames become ordinary Responses again, so routes never know the difference.
 * Every group is asked from the first invocation (a service-binding call is not one of its connections):
 * one level of relays however wide (relay/plan.ts).
 *
 * The frames (relay/protocol.ts) come in two orders (relay/serve.ts writes them):
 *   - `list`: every answer's status, headers and first bytes up to its list head (the JSON before the
 *     items array: RV, continue, columns) first, then each body in target order. The caller reads every
 *     head before it streams items in order, and nothing but heads is ever held in memory.
 *   - `stream`: frames as they come (watches, whose events interleave).
 */

import type { UpstreamIdentity } from '../auth/identity.ts';
import type { RelayFetcher } from '../types.ts';
import { type SendOptions, UpstreamError, type UpstreamFailure } from './client.ts';
import { Demux, NULL_BODY, type RelayMode, type RelayRequest } from './relay/protocol.ts';

export type { RelayMode, RelayRequest, WatchRunner } from './relay/protocol.ts';

const dec = new TextDecoder();

/**
 * A group's merged watch through the relay: the fleet's own watch over `clusters`, as `as`. Resolves with
 * the relay's answer (a watch stream of fleet events, or a Status), or rejects when the relay is out of
 * reach.
 */
export function relayWatch(
  relay: RelayFetcher,
  clusters: string[],
  path: string,
  headers: Headers,
  as: UpstreamIdentity | undefined,
  plainNameCluster: string | undefined,
  signal: AbortSignal,
): Promise<Response> {
  const body: RelayRequest = {
    mode: 'watch',
    ...(as ? { as } : {}),
    clusters,
    ...(plainNameCluster ? { plainNameCluster } : {}),
    requests: [{ cluster: clusters[0] ?? '', method: 'GET', path, headers: [...headers] }],
  };
  return relay(
    new Request('https://fleet-relay.internal/', { method: 'POST', body: JSON.stringify(body), signal }),
  );
}

/**
 * Sends one group's requests through the relay; resolves when every answer's status and headers are in
 * (like a direct fan-out), each answer's body streaming from the relay's frames.
 */
export async function relayGroup(
  relay: RelayFetcher,
  clusters: string[],
  requests: SendOptions[],
  as: UpstreamIdentity | undefined,
  mode: RelayMode,
  signal: AbortSignal | undefined,
): Promise<Array<{ ok: true; res: Response } | { ok: false; error: UpstreamError }>> {
  const body: RelayRequest = {
    mode,
    ...(as ? { as } : {}),
    requests: requests.map((r, i) => ({
      cluster: clusters[i]!,
      method: r.method,
      path: r.path,
      headers: [...(r.headers ?? new Headers())],
      ...(typeof r.body === 'string' ? { body: r.body } : {}),
    })),
  };
  let res: Response;
  try {
    res = await relay(
      new Request('https://fleet-relay.internal/', { method: 'POST', body: JSON.stringify(body), signal }),
    );
  } catch (err) {
    return clusters.map((c) => ({
      ok: false,
      error: new UpstreamError(c, 'unreachable', `relay: ${String(err)}`),
    }));
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    return clusters.map((c) => ({
      ok: false,
      error: new UpstreamError(c, 'unreachable', `relay answered ${res.status}: ${text}`),
    }));
  }
  const demux = new Demux(res.body, clusters.length);
  return Promise.all(
    clusters.map(async (cluster, i) => {
      const first = await demux.next(i);
      if (!first)
        return { ok: false as const, error: new UpstreamError(cluster, 'unreachable', 'relay ended early') };
      if (first.kind === 'X') {
        const x = JSON.parse(dec.decode(first.payload)) as { kind: UpstreamFailure; detail: string };
        return { ok: false as const, error: new UpstreamError(cluster, x.kind, x.detail) };
      }
      const h = JSON.parse(dec.decode(first.payload)) as {
        status: number;
        statusText: string;
        headers: Array<[string, string]>;
      };
      const stream = new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            const f = await demux.next(i);
            if (!f || f.kind === 'E') controller.close();
            else if (f.kind === 'B') controller.enqueue(f.payload);
            else if (f.kind === 'X')
              controller.error(new Error(`cluster ${cluster}: ${dec.decode(f.payload)}`));
          },
          cancel: () => demux.cancel(i),
        },
        { highWaterMark: 0 },
      );
      if (NULL_BODY.has(h.status)) await stream.cancel();
      return {
        ok: true as const,
        res: new Response(NULL_BODY.has(h.status) ? null : stream, {
          status: h.status,
          statusText: h.statusText,
          headers: h.headers,
        }),
      };
    }),
  );
}
