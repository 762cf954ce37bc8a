/**
 * Helpers the fleet routes share to read upstream answers and write their own. Not a route: any route
 * may import it, and it imports no route.
 */
import type { FleetConfig } from '../config/schema.ts';
import { kubeJson } from '../kube/json.ts';
import { failure, readStatus, type Status, statusOfAnswer, statusResponse } from '../kube/status.ts';
import type { SplitEvent } from '../merge/jsonsplit.ts';
import type { ListSource } from '../merge/listmerge.ts';
import { rewriteStatusNames } from '../merge/names.ts';
import { type FleetView, fleetName, toFleetObject } from '../merge/objects.ts';
import { compositeWith, prepareMembership } from '../merge/rv.ts';
import { mergeColumns, toFleetRow } from '../merge/table.ts';
import { type ListAsk, rereadAsk, sameListObject } from '../plan/list.ts';
import { type AskedNamespace, showAskedNamespace } from '../plan/namespace.ts';
import type { ClientDeps } from '../types.ts';
import { forwardableResponseHeaders } from '../upstreams/client.ts';
import type { Outcome, Target } from '../upstreams/fanout.ts';
import { BodyIdleError, type SplitEvents, splitGuarded } from './listread.ts';

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

export { BodyIdleError } from './listread.ts';

// ---------------------------------------------------------------------------------------------------
// Reading one cluster's list body to its end (the merged list's sources): a body that breaks after its
// head is read again at the same resourceVersion, after the items already taken

/** re-reads one cluster's page may take in one merged answer, cuts and failed re-reads alike */
const MAX_REREADS = 3;

/** Asking one cluster for one planned list page, as the fan-out asked it: what reading a body again needs. */
export interface ListReader {
  ask(a: ListAsk<Target>): Promise<Outcome>;
  idleMs: number;
  signal: AbortSignal;
}

export function listHead(e: SplitEvent): Record<string, any> {
  return e.type === 'head' || e.type === 'tail' ? e.value : {};
}

/** Why an upstream call did not give a good answer, in a warning's words. */
export async function outcomeReason(o: Outcome): Promise<string> {
  if (!o.ok) return o.error.kind === 'timeout' ? 'timed out' : o.error.detail;
  return (await readStatus(o.res))?.message ?? `HTTP ${o.res.status}`;
}

/** A body's failure in a warning's words. */
export function bodyFailure(err: unknown): string {
  if (err instanceof BodyIdleError) return err.message.replace(/^its body /, '');
  return `broke off (${(err as Error)?.message ?? String(err)})`;
}

/** A cluster's list could not be read to its end, even read again: the merged body must break off. */
export class ListReadError extends Error {
  constructor(cluster: string, why: string) {
    super(`cluster ${cluster}: ${why}`);
    this.name = 'ListReadError';
  }
}

/**
 * The merge's source for one cluster: its items as they come, and when the body breaks after the head,
 * the same page read again (at the RV it was served at, or its continue token) from after the last item
 * taken, invisibly to the merge. Cancelling it cancels whichever body it is reading.
 */
export function resumableSource(
  r: ListReader,
  ask: ListAsk<Target>,
  head: Record<string, any>,
  first: SplitEvents,
): ListSource {
  const events = new Resumable(r, ask, head, first);
  return {
    cluster: ask.target.cluster,
    head,
    events,
    skip: ask.skip,
    askedWith: ask.askedWith,
    askedLimit: ask.limit,
    cancel: () => events.close(),
  };
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * The events of the body being read, counted, and the page read again when it breaks. `ready` hands on
 * what the body has split already, without a promise (listread.ts SplitEvents): a read that fails is
 * always a `next`.
 */
class Resumable implements AsyncIterator<SplitEvent, undefined> {
  // items handed to the merge (it skips those an earlier fleet page returned itself), and the last one
  private taken = 0;
  private last: Uint8Array | undefined;
  private readonly budget = { left: MAX_REREADS };
  private over = false;

  constructor(
    private readonly r: ListReader,
    private readonly ask: ListAsk<Target>,
    private readonly head: Record<string, any>,
    private body: SplitEvents,
  ) {}

  ready(): SplitEvent | undefined {
    if (this.over) return undefined;
    const e = this.body.ready();
    if (e !== undefined) this.count(e);
    return e;
  }

  /** what a re-read starts after: the items handed on so far, and the last of them */
  private count(e: SplitEvent): void {
    if (e.type !== 'item') return;
    this.taken++;
    this.last = e.bytes;
  }

  async next(): Promise<IteratorResult<SplitEvent, undefined>> {
    while (!this.over) {
      let next: IteratorResult<SplitEvent>;
      try {
        next = await this.body.next();
      } catch (err) {
        try {
          if (this.r.signal.aborted) throw err;
          const at = { taken: this.taken, last: this.last, budget: this.budget };
          this.body = await reread(this.r, this.ask, this.head, at, bodyFailure(err));
        } catch (e) {
          // as a generator's: a failure ends the events
          this.over = true;
          throw e;
        }
        continue;
      }
      if (next.done) break;
      this.count(next.value);
      return next;
    }
    this.over = true;
    return DONE;
  }

  async return(): Promise<IteratorResult<SplitEvent, undefined>> {
    this.over = true;
    return DONE;
  }

  /** no more reading: the body being read is closed (one the merge never reached too) */
  async close(): Promise<void> {
    this.over = true;
    await this.body.return().catch(() => {});
  }
}

/**
 * The page read again, positioned after the `taken` items already handed on; throws a ListReadError when
 * no re-read (of the MAX_REREADS a page may take) gives the same list. Only a failure on the way (no
 * answer, a body that breaks again) is worth another try: an answer that is not the same list is final.
 */
async function reread(
  r: ListReader,
  ask: ListAsk<Target>,
  head: Record<string, any>,
  at: { taken: number; last: Uint8Array | undefined; budget: { left: number } },
  why: string,
): Promise<SplitEvents> {
  const servedAt = head.metadata?.resourceVersion;
  const again = rereadAsk(ask, typeof servedAt === 'string' ? servedAt : undefined);
  const cluster = ask.target.cluster;
  if (!again) throw new ListReadError(cluster, `its list body ${why}, and it named no resourceVersion`);
  const failures: string[] = [];
  while (at.budget.left-- > 0) {
    const got = await rereadOnce(r, again, servedAt, at);
    if (!('why' in got)) return got;
    if (!failures.includes(got.why)) failures.push(got.why);
    if (got.final) break;
  }
  const tried = failures.length ? `; read again at the same resourceVersion: ${failures.join('; ')}` : '';
  throw new ListReadError(cluster, `its list body ${why}${tried}`);
}

type Missed = { why: string; final: boolean };

/** One re-read: the events after the items already taken, or why it does not give the same list. */
async function rereadOnce(
  r: ListReader,
  again: ListAsk<Target>,
  servedAt: unknown,
  at: { taken: number; last: Uint8Array | undefined },
): Promise<SplitEvents | Missed> {
  const o = await r.ask(again);
  // an HTTP answer (410: compacted past it, 403, …) says what any further try would say
  if (!o.ok || !o.res.ok) return { why: await outcomeReason(o), final: o.ok };
  const { events } = splitGuarded(o.res, r.idleMs);
  let keep = false;
  try {
    const first = await events.next();
    const rv = first.done ? undefined : listHead(first.value).metadata?.resourceVersion;
    if (servedAt !== undefined && rv !== servedAt)
      return {
        why: `answered at resourceVersion ${JSON.stringify(rv)}, not ${JSON.stringify(servedAt)}`,
        final: true,
      };
    for (let i = 0; i < at.taken; i++) {
      const e = await events.next();
      if (e.done || e.value.type !== 'item')
        return { why: `it holds ${i} items where ${at.taken} were read before`, final: true };
      if (i === at.taken - 1 && at.last && !sameListObject(at.last, e.value.bytes))
        return { why: `its item ${at.taken} is not the object read there before`, final: true };
    }
    keep = true;
    return events;
  } catch (err) {
    if (r.signal.aborted) throw err;
    return { why: `its list body ${bodyFailure(err)}`, final: false };
  } finally {
    if (!keep) await events.return(undefined).catch(() => {});
  }
}
