/**
 * Coalescing: identical concurrent upstream reads share one upstream call and its streamed answer.
 *
 * The shared call belongs to no request. Each asker gets a reader of its own (a stream over the bytes
 * read so far); the call is cancelled only when its last reader has gone, so a client that goes away
 * does not cancel the answer the others are reading.
 *
 * Memory and pace (the slow-reader policy):
 * - the upstream body is read at the pace of the FASTEST reader (a read happens when some reader has
 *   taken every byte read so far and wants more), so the cluster's stream keeps its own back-pressure;
 * - a reader that falls more than `lagBytes` behind the bytes read is detached: its stream fails with a
 *   {@link SlowReaderError} and the bytes only it still needed are released. It is never waited for. A
 *   list that breaks this way is read again by the list route, from that cluster alone, at the exact RV
 *   it was being read at (the same path as any upstream body that breaks);
 * - while the body is still whole in memory (up to `keepBytes`, within the coalescer's `budgetBytes` for
 *   all calls together) a newcomer may still join from byte 0, and the complete answer can be stored;
 *   past that, bytes every reader has taken are dropped and newcomers start a call of their own.
 *
 * On Workers the call is read in the isolate by the request that started it; other requests only take
 * plain bytes from it (never its stream), as the runtime requires.
 */

import {
  awake,
  type CallOwner,
  type CoalesceOptions,
  type Head,
  type OnComplete,
  SharedCall,
  SharedCallLostError,
  untilAborted,
} from './cache/call.ts';

export {
  type CoalesceOptions,
  type Head,
  type OnComplete,
  SharedCallLostError,
  SlowReaderError,
} from './cache/call.ts';

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export class Coalescer implements CallOwner {
  private readonly calls = new Map<string, SharedCall>();
  /** bytes kept whole by all calls together */
  kept = 0;

  constructor(readonly opts: CoalesceOptions) {}

  /** Calls in flight (tests and metrics). */
  get inflight(): number {
    return this.calls.size;
  }

  /**
   * The answer to `key`: joins the call in flight for it if one can still be joined, else starts one with
   * `start` (given the call's own signal, not the asker's). `joined` says which.
   */
  async join(
    key: string,
    start: (signal: AbortSignal) => Promise<Response>,
    signal?: AbortSignal,
    onComplete?: OnComplete,
  ): Promise<{ res: Response; joined: boolean }> {
    for (;;) {
      try {
        return await this.joinOnce(key, start, signal, onComplete);
      } catch (err) {
        // the owner of the call went away before its head came (Workers): ask again, as ourselves
        if (!(err instanceof SharedCallLostError) || signal?.aborted) throw err;
      }
    }
  }

  private async joinOnce(
    key: string,
    start: (signal: AbortSignal) => Promise<Response>,
    signal: AbortSignal | undefined,
    onComplete: OnComplete | undefined,
  ): Promise<{ res: Response; joined: boolean }> {
    signal?.throwIfAborted();
    let call = this.calls.get(key);
    const joined = call?.joinable === true;
    if (!call || !joined) {
      call = new SharedCall(this, () => this.forget(key, call!), onComplete);
      this.calls.set(key, call);
      call.run(start);
    }
    const reader = call.attach();
    let head: Head;
    try {
      head = await awake(untilAborted(call.head, signal), this.opts.ownerBound);
    } catch (err) {
      call.leave(reader, signal?.aborted === true);
      throw err;
    }
    const init = { status: head.status, statusText: head.statusText, headers: head.headers };
    if (NULL_BODY.has(head.status)) {
      call.leave(reader);
      return { res: new Response(null, init), joined };
    }
    return { res: new Response(call.stream(reader, signal), init), joined };
  }

  private forget(key: string, call: SharedCall): void {
    if (this.calls.get(key) === call) this.calls.delete(key);
  }
}
