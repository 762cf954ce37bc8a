/**
 * The relay side: one invocation serving a group of clusters for another (the `FleetRelay` entrypoint).
 * It sends the group's requests within its own connection budget and answers with one framed stream
 * carrying every upstream answer byte for byte (protocol.ts), in `list` order (every head first) or
 * `stream` order (frames as they come), or, for a `watch`, runs the fleet's merged watch over the group.
 */

import { ListSplitter } from '../../merge/jsonsplit/index.ts';
import type { FleetDeps } from '../../types.ts';
import type { fanOut, Outcome } from '../fanout.ts';
import { type BulkReader, bulkReader } from './bulk.ts';
import { failureFrame, frame, type RelayRequest, type WatchRunner } from './protocol.ts';

/** the fan-out a relay request runs (handed in by the entry: src/worker.ts) */
export type FanOutFn = typeof fanOut;

const enc = new TextEncoder();

/** the least a `list` body frame carries (the last one of a body excepted) */
export const RELAY_FRAME = 64 * 1024;
const HEAD_ROOM = 4 * 1024;

/** W3C traceparent for one invocation: the caller's trace, a span of this invocation. */
function traceparent(incoming: string | null): string {
  const hex = (n: number) =>
    [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, '0')).join('');
  const m = incoming ? /^00-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/.exec(incoming) : null;
  return `00-${m ? m[1] : hex(16)}-${hex(8)}-${m ? m[2] : '01'}`;
}

type Readers = Array<BulkReader | undefined>;

/** The group's clusters, resolved by name from membership: no URL from the request ever reaches fetch. */
async function resolveTargets(base: FleetDeps, names: string[], signal: AbortSignal) {
  const members = await base.membership.members(signal);
  return names.map((cluster) => {
    if (cluster === 'karmada')
      return { cluster: 'karmada', endpoint: base.membership.controlPlane, controlPlane: true };
    const m = members.find((x) => x.name === cluster);
    if (!m) throw new Error(`relay: unknown cluster ${cluster}`);
    return { cluster: m.name, endpoint: m.endpoint, controlPlane: false };
  });
}

/** Each answer's first frame: its status and headers (H), or why there is none (X). */
function headFrames(outcomes: Outcome[]): Uint8Array[] {
  return outcomes.map((o, i) =>
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
      : failureFrame(i, o.error.kind, o.error.detail),
  );
}

/**
 * Answers a relay request (the `FleetRelay` entrypoint): the group's requests as one framed stream, or a
 * `watch` as the fleet's merged watch over the group.
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
  const trace = traceparent(req.headers.get('traceparent'));
  const names = rr.mode === 'watch' ? (rr.clusters ?? []) : rr.requests.map((r) => r.cluster);
  const targets = await resolveTargets(base, names, req.signal);
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
    rr.mode,
  );
  const readers: Readers = outcomes.map((o) => (o.ok && o.res.body ? bulkReader(o.res.body) : undefined));
  const cancelAll = () => Promise.all(readers.map((r) => r?.cancel().catch(() => {})));
  const heads = headFrames(outcomes);
  const body =
    rr.mode === 'stream' ? streamOrder(heads, readers, cancelAll) : listOrder(heads, readers, cancelAll);
  return new Response(body, { headers: { 'Content-Type': 'application/x-fleet-relay' } });
}

/** `stream` order: every head, then frames as they come (watches, whose events interleave). */
function streamOrder(heads: Uint8Array[], readers: Readers, cancelAll: () => Promise<unknown>) {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const h of heads) controller.enqueue(h);
      let open = readers.filter(Boolean).length;
      if (open === 0) controller.close();
      readers.forEach(async (r, i) => {
        if (!r) return;
        try {
          for (let value = await r.read(1); value; value = await r.read(1))
            controller.enqueue(frame('B', i, value));
          controller.enqueue(frame('E', i));
        } catch (err) {
          try {
            controller.enqueue(failureFrame(i, 'unreachable', String(err)));
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
}

/** `list` order: heads and list prefixes first (all clusters), then each body in turn. */
function listOrder(
  heads: Uint8Array[],
  readers: Readers,
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
            // held until every head is in: 4 KiB a read, as before (a relay group's heads share one isolate)
            const value = await r.read(1, HEAD_ROOM);
            if (!value) {
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
      // a list's body in frames of RELAY_FRAME bytes or more, not one per upstream read (workerd reads
      // 4 KiB at a time): every frame costs both invocations a read, a frame and a stream hop
      let parts: Uint8Array[] = [];
      let size = 0;
      try {
        for (;;) {
          const value = await r.read(RELAY_FRAME - size);
          if (!value) break;
          parts.push(value);
          size += value.length;
          if (size < RELAY_FRAME) continue;
          yield frame('B', i, parts);
          parts = [];
          size = 0;
        }
        if (size > 0) yield frame('B', i, parts);
        yield frame('E', i);
      } catch (err) {
        // the bytes read before the break still go first, as they would have one read at a time
        if (size > 0) yield frame('B', i, parts);
        yield failureFrame(i, 'unreachable', String(err));
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
