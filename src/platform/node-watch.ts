/**
 * Upstream watch answers on Node, read from undici's parser by a dispatch handler of their own instead of
 * undici.request's: no body Readable (and its ReadableState), no AsyncResource, no promise and no abort
 * listener per open watch. A merged watch holds one upstream watch per cluster for as long as its client
 * stays, most of them idle: what each costs while nothing comes is what this saves (issue 16, goal 5).
 *
 * The answer is an ordinary Response (status, Headers) whose body is a Web ReadableStream that works as
 * any other (a Status read whole, a reader); read chunk by chunk through src/util/chunks.ts instead, the
 * handler hands every chunk straight to the reader's callback and the Web stream is let go.
 *
 * Cancellation: the request's signal aborts the call until the body is read chunk by chunk; from then on
 * the reader owns it (`ChunkReading.cancel` ends the upstream request), so an idle watch keeps no
 * listener on a signal. A body read the Web way, or not read at all, stays under the signal to its end.
 */
import type { UpstreamRequest } from '../upstreams/transport.ts';
import type { ChunkReading, ChunkSink } from '../util/chunks.ts';
import {
  DispatchAnswer,
  type Dispatching,
  dispatchGet,
  headersFrom,
  type NodeBuffer,
  NULL_BODY,
  type RawHeader,
} from './node-dispatch.ts';

type Chunk = Uint8Array;

/** a Web reader this far behind (queued bytes) pauses the upstream until it reads */
const WEB_QUEUE_BYTES = 256 * 1024;

/** A watch request (`?watch=true` etc., as kube's strconv.ParseBool reads it, or the legacy `/watch/` path). */
export function isWatchUrl(url: string): boolean {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path.includes('/watch/')) return true;
  return q >= 0 && /[?&]watch=(1|t|T|true|TRUE|True)(&|$)/.test(url.slice(q));
}

const answers = new WeakMap<ReadableStream<Uint8Array>, WatchAnswer>();

/** The chunk reading of a body made here (src/util/chunks.ts asks), or undefined for any other body. */
export function watchAnswerChunks(
  body: ReadableStream<Uint8Array>,
  sink: ChunkSink,
): ChunkReading | undefined {
  const a = answers.get(body);
  if (!a) return undefined;
  answers.delete(body);
  a.read(sink);
  return a;
}

/** Sends a GET watch through `pool`; resolves with the answer once its headers are in. */
export function sendWatch(
  pool: Dispatching,
  req: UpstreamRequest,
  headers: Record<string, string | string[]>,
  mapError: (err: unknown) => unknown,
): Promise<Response> {
  return dispatchGet(pool, req, headers, mapError, (settle) => new WatchAnswer(settle, req.signal, mapError));
}

/** One upstream watch call: undici's (legacy) dispatch handler, and its body's two ways out. */
class WatchAnswer extends DispatchAnswer implements ChunkReading {
  /** chunks that came before anyone read (lazily made) */
  private held: Chunk[] | undefined;
  private heldBytes = 0;
  /** chunk by chunk: where they go */
  private sink: ChunkSink | undefined;
  /** the Web way: the stream's controller while a pull waits */
  private web: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** the sink asked to stop for now (its own reader is behind): undici holds the socket */
  private heldBack = false;
  /** the sink threw on a held chunk (it was told): the rest of them goes nowhere */
  private threw = false;

  // ------------------------------------------------------------------ undici's side

  onHeaders(status: number, raw: readonly RawHeader[], resume: () => void): boolean {
    // informational answers (1xx) say nothing of the watch
    if (status < 200 || this.over) return true;
    this.resumeCall = resume;
    const headers = headersFrom(raw);
    if (NULL_BODY.has(status)) {
      // no body to read: whatever follows is dropped
      this.over = 'ended';
      this.unlisten();
      this.answer(new Response(null, { status, headers }));
      return true;
    }
    const body = new ReadableStream<Uint8Array>(
      {
        pull: (ctl) => this.pull(ctl),
        cancel: (reason) => this.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    answers.set(body, this);
    // a 101 nobody asked for is a bad gateway, as the piped path says
    this.answer(new Response(body, { status: status === 101 ? 502 : status, headers }));
    return true;
  }

  onData(chunk: NodeBuffer): boolean {
    if (this.over) return true;
    // a plain view: what the reader keeps of it is copied (Buffer#slice would not copy)
    const c = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const to = this.sink;
    if (to) {
      try {
        to.chunk(c);
      } catch (err) {
        this.fail(err);
        this.abortWith(err, 'watch');
        return true;
      }
      return !this.heldBack;
    }
    // kept past this call: a copy (an HTTP/1.1 connection's read is the next read's buffer, node.ts)
    const kept = c.slice();
    if (this.web && !this.held?.length) {
      const ctl = this.web;
      this.web = undefined;
      ctl.enqueue(kept);
      return true;
    }
    if (this.held) this.held.push(kept);
    else this.held = [kept];
    this.heldBytes += c.byteLength;
    if (this.heldBytes < WEB_QUEUE_BYTES) return true;
    this.paused = true;
    return false;
  }

  onComplete(): void {
    if (this.over) return;
    this.over = 'ended';
    this.unlisten();
    const to = this.sink;
    this.sink = undefined;
    to?.end();
    if (this.web && !this.held?.length) {
      this.web.close();
      this.web = undefined;
    }
  }

  onError(err: Error): void {
    const e = this.undiciError(err);
    if (e === undefined) return;
    if (this.refuse(e)) {
      // no answer yet: the promise of its head says why, there is no body to tell
      this.over = 'failed';
      this.unlisten();
      return;
    }
    this.fail(e);
  }

  // ------------------------------------------------------------------ the body's side

  private fail(e: unknown): void {
    if (this.over) return;
    this.over = 'failed';
    this.failure = e;
    this.unlisten();
    const to = this.sink;
    this.sink = undefined;
    to?.fail(e);
    if (this.web && !this.held?.length) {
      this.web.error(e);
      this.web = undefined;
    }
  }

  /** nobody wants the answer any more: end the upstream call */
  cancel(reason?: unknown): void {
    if (!this.markCancelled(reason, 'watch')) return;
    this.held = undefined;
    const to = this.sink;
    this.sink = undefined;
    this.abortWith(this.failure, 'watch');
    to?.end();
  }

  pause(): void {
    this.heldBack = true;
  }

  resume(): void {
    if (!this.heldBack) return;
    this.heldBack = false;
    // undici's resume is a no-op for a socket that is not paused
    if (this.sink && !this.over) this.resumeCall?.();
  }

  /**
   * chunk by chunk into `sink`, synchronously as they come; the signal no longer applies. Of the chunks
   * held meanwhile only the first is handed on now, the rest (and what comes until then) in the next
   * task: a watch replaying its history has it all here when the merged watch starts reading, and
   * handing it all on at once kept the first event from its client until every event was merged.
   */
  read(sink: ChunkSink, rest = false): void {
    this.unlisten();
    let held = this.held;
    this.held = undefined;
    this.heldBytes = 0;
    if (!rest && held && held.length > 1 && !this.over) {
      this.held = held.slice(1);
      for (const c of this.held) this.heldBytes += c.byteLength;
      held = held.slice(0, 1);
      setTimeout(() => {
        if (!this.threw) this.read(sink, true);
      }, 0);
    }
    try {
      for (const c of held ?? []) sink.chunk(c);
    } catch (err) {
      this.threw = true;
      this.held = undefined;
      this.over = 'failed';
      this.abortWith(err, 'watch');
      sink.fail(err);
      return;
    }
    // the rest follows in the next task (above): ends and failures meanwhile are told after it
    if (this.held) return;
    if (this.over === 'ended' || this.over === 'cancelled') {
      sink.end();
      return;
    }
    if (this.over === 'failed') {
      sink.fail(this.failure);
      return;
    }
    this.sink = sink;
    if (this.paused && !this.heldBack) {
      this.paused = false;
      this.resumeCall?.();
    }
  }

  private pull(ctl: ReadableStreamDefaultController<Uint8Array>): void {
    const next = this.held?.shift();
    if (next) {
      this.heldBytes -= next.byteLength;
      ctl.enqueue(next);
      if (this.paused && this.heldBytes < WEB_QUEUE_BYTES) {
        this.paused = false;
        this.resumeCall?.();
      }
      return;
    }
    if (this.over === 'ended' || this.over === 'cancelled') {
      ctl.close();
      return;
    }
    if (this.over === 'failed') {
      ctl.error(this.failure);
      return;
    }
    this.web = ctl;
  }
}
