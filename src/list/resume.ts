/**
 * Reading one cluster's list body to its end, the merged list's sources (list/route.ts): a body that
 * breaks after its head is read again at the same resourceVersion, after the items already taken.
 */
import { readStatus } from '../kube/status.ts';
import type { ItemScanner, SplitEvent } from '../merge/jsonsplit/index.ts';
import type { Outcome, Target } from '../upstreams/fanout.ts';
import type { ListSource } from './merge.ts';
import { type ListAsk, rereadAsk, sameListObject } from './plan.ts';
import { BodyIdleError, type SplitEvents, splitGuarded } from './read.ts';

/** re-reads one cluster's page may take in one merged answer, cuts and failed re-reads alike */
const MAX_REREADS = 3;

/** Asking one cluster for one planned list page, as the fan-out asked it: what reading a body again needs. */
export interface ListReader {
  ask(a: ListAsk<Target>): Promise<Outcome>;
  idleMs: number;
  signal: AbortSignal;
  /** the item scanner the request's bodies share (src/list/read.ts splitGuarded) */
  scanner?: ItemScanner;
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
  const { events } = splitGuarded(o.res, r.idleMs, r.scanner);
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
