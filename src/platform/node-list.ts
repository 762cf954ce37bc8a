/**
 * Upstream answers read by pulling on Node (a merged list's sources, src/util/pulled.ts), straight from
 * undici's parser by a dispatch handler of their own instead of undici.request's: no body Readable (and
 * its ReadableState, whose reads join the chunks it holds into one more copy), no async iterator and no
 * promise per chunk between them and the reader. Over HTTP/1.1 the handler is fed by the fleet's own
 * reader on kept-alive connections (./node-list-h1.ts) instead of undici's pool; over HTTP/2 by the pool.
 *
 * The connection is read only as far as asked: a chunk that comes before anyone asked for it is held and
 * the parser paused until the next read. A body waiting its turn in a merge of 200 clusters then holds the chunk its head came in (and
 * what the socket itself read ahead), not its whole answer: read ahead, 200 small answers are the whole
 * merged list in memory at once, promoted through young collections and, as external memory, forcing
 * more of them (measured: scale-curve 200 × 50).
 *
 * The answer is an ordinary Response (status, Headers) whose body is a Web ReadableStream that works as
 * any other (a Status read whole, a reader); taken by `pulledReaderOf`, the handler is its reader.
 */
import { PairHeaders } from '../upstreams/pair-headers.ts';
import type { UpstreamRequest } from '../upstreams/transport.ts';
import type { PullReader } from '../util/pulled.ts';
import {
  DispatchAnswer,
  type Dispatching,
  dispatchGet,
  type NodeBuffer,
  NULL_BODY,
  type RawHeader,
} from './node-dispatch.ts';

type Chunk = Uint8Array;
type ReadResult = ReadableStreamReadResult<Uint8Array>;
const DONE: ReadResult = { done: true, value: undefined };
/** what an answer that closes its connection may hold before it is paused (undici.request's body: 64 KiB) */
const CLOSING_HOLD = 64 * 1024;
/**
 * what an answer being read (asked for a second chunk) may hold before it is paused: its connection then
 * pauses once every four or five reads instead of after each (a 10x1000 list is 470 reads; the reading
 * side never paused cost 0.85x). One waiting its turn still holds only the read its head came in.
 */
const READING_HOLD = 256 * 1024;

const answers = new WeakMap<ReadableStream<Uint8Array>, PulledAnswer>();

/**
 * An answer's head lines as the Headers its readers see, combined when first read (PairHeaders), and kept
 * beside the Response instead of given to its constructor: an undici Headers built from the lines and
 * copied again by the Response made a pulled head 1.16-1.3x as costly (5 and 10 lines, paired
 * microbenchmark), once per cluster of a merged list, for the one or two lines the list route reads.
 */
function lazyHeaders(raw: readonly RawHeader[]): Headers {
  const lines: string[] = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) lines[i] = raw[i]!.toString('latin1');
  return new PairHeaders(lines) as unknown as Headers;
}

/**
 * The pulling reader of an answer or a body made here (src/util/pulled.ts asks), or undefined for any
 * other. An answer whose Web body was never asked for is read without one.
 */
export function pulledReaderOf(x: ReadableStream<Uint8Array> | Response): PullReader | undefined {
  if (x instanceof PulledResponse) return x.takeReader();
  if (x instanceof Response) return undefined;
  const a = answers.get(x);
  if (!a || x.locked) return undefined;
  answers.delete(x);
  // the Web stream is let go; the reader owns the call from now on (cancel ends it)
  return a;
}

/** Sends a bodyless GET through `pool`; resolves with the answer once its headers are in. */
export function sendPulled(
  pool: Dispatching,
  req: UpstreamRequest,
  headers: Record<string, string | string[]>,
  mapError: (err: unknown) => unknown,
): Promise<Response> {
  return dispatchGet(
    pool,
    req,
    headers,
    mapError,
    (settle) => new PulledAnswer(settle, req.signal, mapError),
  );
}

/** One upstream call: undici's (legacy) dispatch handler, and the reader of its body. */
class PulledAnswer extends DispatchAnswer implements PullReader {
  /** chunks in before anyone asked (one, the parser pausing after it; more only if undici goes on) */
  private held: Chunk[] = [];
  /**
   * an answer that closes its connection (`Connection: close`) is paused only as undici.request's body
   * would pause it (64 KiB held): undici asserts, uncaught, when such a connection ends while its parser
   * is paused (Parser.finish), which a pause after every chunk would make likely
   */
  private closing = false;
  private heldBytes = 0;
  /** reads asked for (two: the answer is being read, not waiting its turn) */
  private reads = 0;
  /** a read waiting for the next chunk */
  private waiting: { resolve(r: ReadResult): void; reject(e: unknown): void } | undefined;

  // ------------------------------------------------------------------ undici's side

  onHeaders(status: number, raw: NodeBuffer[], resume: () => void): boolean {
    if (status < 200 || this.over) return true;
    this.resumeCall = resume;
    const headers = lazyHeaders(raw);
    this.closing = /close/i.test(headers.get('connection') ?? '');
    if (NULL_BODY.has(status)) {
      this.over = 'ended';
      this.unlisten();
      this.answer(new Response(null, { status, headers }));
      return true;
    }
    this.answer(new PulledResponse(this, status === 101 ? 502 : status, headers) as unknown as Response);
    return true;
  }

  /** the answer's body as a Web stream (made when someone asks for it: PulledResponse) */
  webBody(): ReadableStream<Uint8Array> {
    const body = new ReadableStream<Uint8Array>(
      {
        pull: async (ctl) => {
          const r = await this.read();
          if (r.done) ctl.close();
          else ctl.enqueue(r.value);
        },
        cancel: (reason) => this.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    answers.set(body, this);
    return body;
  }

  onData(chunk: NodeBuffer): boolean {
    // resumed after a pause, llhttp hands the paused span again, empty: it is no chunk (and pausing on it
    // again would never get further)
    if (this.over || chunk.byteLength === 0) return true;
    // a plain view: a Node Buffer's subarray costs more
    const c = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const w = this.waiting;
    if (w) {
      // a reader that asked: the next chunk may come in while it works on this one
      this.waiting = undefined;
      w.resolve({ done: false, value: c });
      return true;
    }
    this.held.push(c);
    this.heldBytes += c.byteLength;
    const hold = this.closing ? CLOSING_HOLD : this.reads > 1 ? READING_HOLD : 0;
    if (this.heldBytes < hold) return true;
    // one chunk ahead of the reader: nothing more is read from the connection until the next read asks
    this.paused = true;
    return false;
  }

  onComplete(): void {
    if (this.over) return;
    this.over = 'ended';
    this.unlisten();
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve(DONE);
  }

  onError(err: Error): void {
    const e = this.undiciError(err);
    if (e === undefined) return;
    this.over = 'failed';
    this.failure = e;
    this.unlisten();
    this.refuse(e);
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(e);
  }

  // ------------------------------------------------------------------ the reader's side

  read(): Promise<ReadResult> {
    this.reads++;
    const next = this.held.shift();
    if (next) {
      this.heldBytes -= next.byteLength;
      return Promise.resolve({ done: false, value: next });
    }
    if (this.over === 'ended' || this.over === 'cancelled') return Promise.resolve(DONE);
    if (this.over === 'failed') return Promise.reject(this.failure);
    return new Promise<ReadResult>((resolve, reject) => {
      this.waiting = { resolve, reject };
      if (this.paused) {
        this.paused = false;
        // may hand the next chunk (or the end) at once, from what the connection already read
        this.resumeCall?.();
      }
    });
  }

  /** nobody wants the answer any more: end the upstream call (a waiting read ends as done) */
  cancel(reason?: unknown): Promise<void> {
    this.held = [];
    this.heldBytes = 0;
    if (!this.markCancelled(reason, 'read')) return Promise.resolve();
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve(DONE);
    this.abortWith(this.failure, 'read');
    return Promise.resolve();
  }

  releaseLock(): void {}
}

/**
 * A pulled call's answer, whose Web body is made only when something asks for it (`body`, `text()`, …):
 * the list route's reader takes the call itself (pulledReaderOf), and Node 20 spends ≈ 60 µs making a
 * ReadableStream (makeTransferable), which a merge paid once per cluster (12 ms of a 200-cluster answer).
 * It is a Response by its prototype, not by undici's constructor (its state object, an empty Headers and
 * its list, WebIDL checks: ≈ 10 µs and a handful of objects per cluster of a merged list, kept until the
 * list ends): every member a reader uses is its own (below), so no undici accessor ever reads it.
 */
class PulledResponse {
  #stream: ReadableStream<Uint8Array> | undefined;
  #taken = false;
  readonly #call: PulledAnswer;
  // private: Response.prototype's accessors of these names have no setters for an assignment to pass
  readonly #status: number;
  /** the answer's head lines (PairHeaders) */
  readonly #headers: Headers;

  constructor(call: PulledAnswer, status: number, headers: Headers) {
    this.#call = call;
    this.#status = status;
    this.#headers = headers;
  }

  get status(): number {
    return this.#status;
  }
  get headers(): Headers {
    return this.#headers;
  }
  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }
  get statusText(): string {
    return '';
  }
  get type(): Response['type'] {
    return 'default';
  }
  get url(): string {
    return '';
  }
  get redirected(): boolean {
    return false;
  }
  get body(): ReadableStream<Uint8Array> {
    return this.#body();
  }
  get bodyUsed(): boolean {
    return this.#taken || (this.#stream?.locked ?? false);
  }

  /** the call as its reader, when no Web body was made of it (nor taken before) */
  takeReader(): PullReader | undefined {
    if (this.#stream) return pulledReaderOf(this.#stream);
    if (this.#taken) return undefined;
    this.#taken = true;
    return this.#call;
  }

  #body(): ReadableStream<Uint8Array> {
    this.#stream ??= this.#call.webBody();
    return this.#stream;
  }

  /** a Response of the Web body, whose readers read it whole */
  #whole(): Response {
    return new Response(this.#body(), { status: this.status, headers: this.headers });
  }

  text(): Promise<string> {
    return this.#whole().text();
  }

  json(): Promise<any> {
    return this.#whole().json();
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#whole().arrayBuffer();
  }

  blob(): Promise<Blob> {
    return this.#whole().blob();
  }

  formData(): Promise<FormData> {
    return this.#whole().formData();
  }

  bytes(): Promise<Uint8Array> {
    return this.#whole()
      .arrayBuffer()
      .then((b) => new Uint8Array(b));
  }

  clone(): Response {
    const [a, b] = this.#body().tee();
    this.#stream = a;
    return new Response(b, { status: this.status, headers: this.headers });
  }

  static {
    // `instanceof Response` holds (as PairHeaders is a Headers); every member above shadows undici's
    Object.setPrototypeOf(PulledResponse.prototype, Response.prototype);
  }
}
