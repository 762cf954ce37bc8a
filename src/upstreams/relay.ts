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
 * Groups are themselves split when wider than the budget: budget² clusters at depth 2, budget³ at depth 3.
 *
 * Frames: `<kind><index> <length>\n<payload>`, kind H (status and headers, JSON), B (body bytes), E (end of
 * that body), X (failure, JSON {kind, detail}). Two orders:
 *   - `list`: every answer's status, headers and first bytes up to its list head (the JSON before the
 *     items array: RV, continue, columns) first, then each body in target order. The caller reads every
 *     head before it streams items in order, and nothing but heads is ever held in memory.
 *   - `stream`: frames as they come (watches, whose events interleave).
 */

import type { UpstreamIdentity } from '../auth/identity.ts';
import { ListSplitter } from '../merge/jsonsplit.ts';
import type { FleetDeps, RelayFetcher } from '../types.ts';
import { type SendOptions, UpstreamError, type UpstreamFailure } from './client.ts';
import type { ResolvedEndpoint } from './endpoint.ts';

export type RelayMode = 'list' | 'stream' | 'watch';

/** Calls the fleet's own relay entrypoint (a service binding's fetch). */

export interface RelayRequest {
  mode: RelayMode;
  /** who the group's requests go as (the calling request's bound identity) */
  as?: UpstreamIdentity;
  requests: Array<{
    cluster: string;
    method: string;
    path: string;
    headers: Array<[string, string]>;
    body?: string;
  }>;
  /** `watch` mode: the clusters of the group, and which cluster a plain name means there */
  clusters?: string[];
  plainNameCluster?: string;
}

/** What a `watch` relay request runs: the fleet's merged watch over the given clusters (routes/watch.ts). */
export type WatchRunner = (
  req: Request,
  deps: FleetDeps,
  targets: Array<{ cluster: string; endpoint: ResolvedEndpoint; controlPlane: boolean }>,
  plainNameCluster: string | undefined,
) => Promise<Response>;

const enc = new TextEncoder();
const dec = new TextDecoder();
const NULL_BODY = new Set([101, 204, 205, 304]);

function frame(
  kind: 'H' | 'B' | 'E' | 'X',
  index: number,
  payload: Uint8Array = new Uint8Array(0),
): Uint8Array {
  const head = enc.encode(`${kind}${index} ${payload.length}\n`);
  const out = new Uint8Array(head.length + payload.length);
  out.set(head, 0);
  out.set(payload, head.length);
  return out;
}

/** W3C traceparent for one invocation: the caller's trace, a span of this invocation. */
function traceparent(incoming: string | null): string {
  const hex = (n: number) =>
    [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const m = incoming ? /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(incoming) : null;
  return `00-${m ? m[1] : hex(16)}-${hex(8)}-${m ? m[2] : '01'}`;
}

// ---------------------------------------------------------------------------------------------------
// the relay side: one invocation serving a group

/**
 * Answers a relay request (the `FleetRelay` entrypoint). Clusters are resolved by name from membership:
 * no URL from the request ever reaches fetch.
 */
export async function handleRelay(
  base: FleetDeps,
  req: Request,
  fanOut: FanOutFn,
  watch?: WatchRunner,
): Promise<Response> {
  let rr: RelayRequest;
  try {
    rr = (await req.json()) as RelayRequest;
  } catch {
    return new Response('bad relay request', { status: 400 });
  }
  const members = await base.membership.members(req.signal);
  const trace = traceparent(req.headers.get('traceparent'));
  const names = rr.mode === 'watch' ? (rr.clusters ?? []) : rr.requests.map((r) => r.cluster);
  const targets = names.map((cluster) => {
    if (cluster === 'karmada')
      return { cluster: 'karmada', endpoint: base.membership.controlPlane, controlPlane: true };
    const m = members.find((x) => x.name === cluster);
    if (!m) throw new Error(`relay: unknown cluster ${cluster}`);
    return { cluster: m.name, endpoint: m.endpoint, controlPlane: false };
  });
  // the caller's identity, bound as in the calling invocation (middleware/impersonation)
  const bound = rr.as ? { ...base, client: base.client.forCaller({ as: rr.as }) } : base;
  if (rr.mode === 'watch') {
    // one merged watch over this group (it fits the budget); the calling invocation merges the groups'
    const r = rr.requests[0];
    if (!watch || !r) return new Response('watch relay not available', { status: 400 });
    const headers = new Headers(r.headers);
    headers.set('traceparent', trace);
    const sub = new Request(`https://fleet-relay.internal${r.path}`, { headers, signal: req.signal });
    return watch(sub, bound, targets, rr.plainNameCluster);
  }
  const outcomes = await fanOut(
    bound,
    targets,
    (t) => {
      const r = rr.requests[targets.indexOf(t)]!;
      const headers = new Headers(r.headers);
      headers.set('traceparent', trace);
      return { method: r.method, path: r.path, headers, body: r.body ?? null, signal: req.signal };
    },
    undefined,
    rr.mode,
  );
  const readers = outcomes.map((o) => (o.ok && o.res.body ? o.res.body.getReader() : undefined));
  const cancelAll = () => Promise.all(readers.map((r) => r?.cancel().catch(() => {})));
  const heads = outcomes.map((o, i) =>
    o.ok
      ? frame(
          'H',
          i,
          enc.encode(
            JSON.stringify({
              status: o.res.status,
              statusText: o.res.statusText,
              headers: [...o.res.headers],
            }),
          ),
        )
      : frame('X', i, enc.encode(JSON.stringify({ kind: o.error.kind, detail: o.error.detail }))),
  );

  let body: ReadableStream<Uint8Array>;
  if (rr.mode === 'stream') {
    body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const h of heads) controller.enqueue(h);
        let open = readers.filter(Boolean).length;
        if (open === 0) controller.close();
        readers.forEach(async (r, i) => {
          if (!r) return;
          try {
            for (;;) {
              const { value, done } = await r.read();
              if (done) break;
              controller.enqueue(frame('B', i, value));
            }
            controller.enqueue(frame('E', i));
          } catch (err) {
            try {
              controller.enqueue(
                frame('X', i, enc.encode(JSON.stringify({ kind: 'unreachable', detail: String(err) }))),
              );
            } catch {
              // the consumer is gone
            }
          }
          if (--open === 0) {
            try {
              controller.close();
            } catch {
              // already cancelled
            }
          }
        });
      },
      cancel: async () => {
        await cancelAll();
      },
    });
  } else {
    body = listOrder(heads, readers, cancelAll);
  }
  return new Response(body, { headers: { 'Content-Type': 'application/x-fleet-relay' } });
}

/** `list` order: heads and list prefixes first (all clusters), then each body in turn. */
function listOrder(
  heads: Uint8Array[],
  readers: Array<ReadableStreamDefaultReader<Uint8Array> | undefined>,
  cancelAll: () => Promise<unknown>,
): ReadableStream<Uint8Array> {
  const ended = readers.map((r) => !r);
  async function* frames(): AsyncGenerator<Uint8Array> {
    // read every body until its list head is complete; only those bytes are held
    const prefixes = await Promise.all(
      readers.map(async (r, i) => {
        if (!r) return [];
        const held: Uint8Array[] = [];
        const splitter = new ListSplitter({ arrayKey: ['items', 'rows'] });
        let headSeen = false;
        try {
          while (!headSeen) {
            const { value, done } = await r.read();
            if (done) {
              ended[i] = true;
              break;
            }
            held.push(value);
            splitter.push(value, (e) => {
              if (e.type === 'head') headSeen = true;
            });
          }
        } catch {
          // not JSON, or broken: relay the bytes as they are; the caller's own parser will say what is wrong
          headSeen = true;
        }
        return held;
      }),
    );
    for (const [i, h] of heads.entries()) {
      yield h;
      for (const p of prefixes[i]!) yield frame('B', i, p);
      if (ended[i] && readers[i]) yield frame('E', i);
    }
    for (const [i, r] of readers.entries()) {
      if (!r || ended[i]) continue;
      try {
        for (;;) {
          const { value, done } = await r.read();
          if (done) break;
          yield frame('B', i, value);
        }
        yield frame('E', i);
      } catch (err) {
        yield frame('X', i, enc.encode(JSON.stringify({ kind: 'unreachable', detail: String(err) })));
      }
    }
  }
  const it = frames();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const r = await it.next();
        if (r.done) controller.close();
        else controller.enqueue(r.value);
      },
      async cancel() {
        await it.return(undefined);
        await cancelAll();
      },
    },
    { highWaterMark: 0 },
  );
}

// ---------------------------------------------------------------------------------------------------
// the calling side: frames back into Responses

interface Parsed {
  kind: string;
  index: number;
  payload: Uint8Array;
}

/** Splits the relay body into frames, on demand; frames for other answers wait in per-answer queues. */
class Demux {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private buf = new Uint8Array(0);
  private ended = false;
  private pumping: Promise<void> | undefined;
  private readonly queues: Parsed[][];
  private readonly cancelled: boolean[];

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly n: number,
  ) {
    this.reader = body.getReader();
    this.queues = Array.from({ length: n }, () => []);
    this.cancelled = Array.from({ length: n }, () => false);
  }

  private parseOne(): Parsed | undefined {
    const nl = this.buf.indexOf(0x0a);
    if (nl < 0) return undefined;
    const line = dec.decode(this.buf.subarray(0, nl));
    const m = /^([HBEX])(\d+) (\d+)$/.exec(line);
    if (!m) throw new Error(`relay: bad frame header ${JSON.stringify(line.slice(0, 40))}`);
    const len = Number(m[3]);
    if (this.buf.length < nl + 1 + len) return undefined;
    const payload = this.buf.slice(nl + 1, nl + 1 + len);
    this.buf = this.buf.subarray(nl + 1 + len);
    return { kind: m[1]!, index: Number(m[2]), payload };
  }

  /** Parses one buffered frame into its queue; false when no whole frame is buffered. */
  private tryParse(): boolean {
    const f = this.parseOne();
    if (!f) return false;
    if (f.index < this.n && !this.cancelled[f.index]) this.queues[f.index]!.push(f);
    return true;
  }

  /** Reads until one more frame is parsed, or the stream ends. */
  private async pumpOnce(): Promise<void> {
    while (!this.tryParse()) {
      if (this.ended) return;
      const { value, done } = await this.reader.read();
      if (done) {
        this.ended = true;
        return;
      }
      const next = new Uint8Array(this.buf.length + value.length);
      next.set(this.buf, 0);
      next.set(value, this.buf.length);
      this.buf = next;
    }
  }

  /** The next frame for answer `i`, or undefined when the relay stream ended without one. */
  async next(i: number): Promise<Parsed | undefined> {
    for (;;) {
      const q = this.queues[i]!;
      if (q.length) return q.shift();
      if (this.ended) {
        if (!this.tryParse()) return undefined;
        continue;
      }
      // one read at a time: concurrent callers share the pump, then look at their queue again
      this.pumping ??= this.pumpOnce().finally(() => {
        this.pumping = undefined;
      });
      await this.pumping;
    }
  }

  async cancel(i: number): Promise<void> {
    this.cancelled[i] = true;
    this.queues[i]!.length = 0;
    if (this.cancelled.every(Boolean)) await this.reader.cancel().catch(() => {});
  }
}

export type FanOutFn = typeof import('./fanout.ts').fanOut;

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
