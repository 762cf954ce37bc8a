/**
 * One upstream answer of the direct relay (./relay.ts): the undici dispatch handler that receives it, and
 * the Response it is handed above the seam as, whose Headers and body are made only if someone reads them.
 */
import type { Dispatcher } from 'undici';
import { neutralError } from '../../src/platform/node.ts';
import { connectionListed, HOP_BY_HOP } from '../../src/upstreams/client.ts';
import { HeadersTimeoutError } from '../../src/upstreams/transport.ts';
import { bodyEnded, tellsEnd } from '../../src/util/ends.ts';

/** bytes of an answer held before the client's response is attached; the upstream is paused past it */
export const HOLD_BYTES = 64 * 1024;

/** Where an answer's body goes once it has one: the client's socket, or a Web stream someone reads. */
export interface Sink {
  /** false: stop until the sink calls {@link Exchange.resume} */
  data(chunk: Buffer): boolean;
  end(): void;
  fail(err: Error): void;
}

/** Header name/value pairs as written to the client. */
export type Pairs = string[];

/** the lengths of the names {@link responsePairs} looks for: hop-by-hop ones, Content-Length and -Encoding */
const SPECIAL_LENGTHS = (() => {
  const names = [...HOP_BY_HOP, 'connection', 'content-length', 'content-encoding'];
  const by = new Uint8Array(Math.max(...names.map((n) => n.length)) + 1);
  for (const n of names) by[n.length] = 1;
  return by;
})();

/**
 * The upstream's raw header lines minus hop-by-hop ones and those `Connection` names, as latin1 strings
 * (byte for byte what came), with `Content-Encoding: identity` added to a streamed answer of unknown
 * length when asked (see the route).
 */
function responsePairs(raw: Buffer[], markStreaming: boolean): { pairs: Pairs; length: boolean } {
  const pairs: Pairs = [];
  let listed: Set<string> | undefined;
  let length = false;
  let encoded = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1');
    // most names cannot be one this loop looks for (by their length): no lowercase copy of those
    if (!SPECIAL_LENGTHS[name.length]) {
      pairs.push(name, raw[i + 1]!.toString('latin1'));
      continue;
    }
    const lower = name.toLowerCase();
    if (lower === 'connection') {
      // `keep-alive` (what Node's servers send) lists nothing to drop but itself: no Set
      const more = connectionListed(raw[i + 1]!.toString('latin1'));
      if (more && listed) for (const n of more) listed.add(n);
      else if (more) listed = more;
      continue;
    }
    if (HOP_BY_HOP.has(lower)) continue;
    if (lower === 'content-length') length = true;
    else if (lower === 'content-encoding') encoded = true;
    pairs.push(name, raw[i + 1]!.toString('latin1'));
  }
  if (listed)
    for (let i = pairs.length - 2; i >= 0; i -= 2)
      if (listed.has(pairs[i]!.toLowerCase())) pairs.splice(i, 2);
  if (markStreaming && !length && !encoded) pairs.push('Content-Encoding', 'identity');
  return { pairs, length };
}

function timeoutOrNeutral(err: unknown): unknown {
  const code = (err as { code?: string })?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
    return new HeadersTimeoutError('no response headers in time');
  return neutralError(err);
}

/** One upstream call: undici's (legacy, raw-header) dispatch handler and the answer's flow to its sink. */
export class Exchange implements Dispatcher.DispatchHandler {
  private abortUpstream?: (err: Error) => void;
  private resumeUpstream?: () => void;
  private paused = false;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private ended = false;
  private failure?: Error;
  private sink?: Sink;
  private cancelled?: Error;
  /** the upstream call is over (answered whole, failed or aborted) */
  finished = false;
  response?: DirectResponse;

  constructor(
    private readonly markStreaming: boolean,
    private settle?: { resolve(r: Response): void; reject(e: unknown): void },
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
    if (this.cancelled) abort(this.cancelled);
  }

  onHeaders(status: number, raw: Buffer[], resume: () => void): boolean {
    this.resumeUpstream = resume;
    const { pairs, length } = responsePairs(raw, this.markStreaming);
    // a 101 nobody asked for (upgrades go deploy/node/upgrade.ts's way) is a bad gateway, as the piped path says
    this.response = new DirectResponse(status === 101 ? 502 : status, pairs, length, this);
    const s = this.settle;
    this.settle = undefined;
    s?.resolve(this.response as unknown as Response);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.sink) {
      if (this.sink.data(chunk)) return true;
      this.paused = true;
      return false;
    }
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes < HOLD_BYTES) return true;
    this.paused = true;
    return false;
  }

  onComplete(): void {
    this.finished = true;
    if (this.sink) this.sink.end();
    else this.ended = true;
  }

  onError(err: Error): void {
    this.finished = true;
    if (this.settle) {
      const s = this.settle;
      this.settle = undefined;
      s.reject(timeoutOrNeutral(err));
    } else if (this.sink) this.sink.fail(err);
    else this.failure = err;
  }

  /** the sink has room again */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resumeUpstream?.();
  }

  /** nobody wants the answer any more: stop the upstream call */
  cancel(reason: Error): void {
    if (this.finished || this.cancelled) return;
    this.cancelled = reason;
    this.abortUpstream?.(reason);
  }

  /** whether a sink may still take the whole answer */
  get attachable(): boolean {
    return !this.sink;
  }

  /** hands the answer to `sink`: what was held first, then the rest as it comes */
  attach(sink: Sink): void {
    this.sink = sink;
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    let room = true;
    for (const c of held) room = sink.data(c);
    if (this.failure) sink.fail(this.failure);
    else if (this.ended) sink.end();
    else if (room) this.resume();
  }

  /** the held chunks when the whole answer is already here (one write for a small answer), else undefined */
  takeWhole(): Buffer[] | undefined {
    if (!this.ended || this.sink) return undefined;
    this.sink = { data: () => true, end() {}, fail() {} };
    const held = this.held;
    this.held = [];
    return held;
  }
}

/**
 * The upstream's headers as a Headers, without making one until needed: `get` and `has` (what the chain
 * asks of most answers: the metrics' Warning, the route's Content-Length) read the pairs; anything else
 * makes the real Headers first. A change marks it `changed`, so the answer is then written from it
 * rather than from the raw lines. Not a subclass (whose constructor would make a Headers per answer):
 * its prototype is Headers', so `instanceof Headers` holds and `new Headers(it)` copies it.
 */
class UpstreamHeaders {
  #pairs: Pairs;
  #native?: Headers;
  changed = false;

  constructor(pairs: Pairs) {
    this.#pairs = pairs;
  }

  get #headers(): Headers {
    if (!this.#native) {
      const h = new Headers();
      for (let i = 0; i < this.#pairs.length; i += 2) h.append(this.#pairs[i]!, this.#pairs[i + 1]!);
      this.#native = h;
    }
    return this.#native;
  }

  get(name: string): string | null {
    if (this.#native) return this.#native.get(name);
    const n = name.toLowerCase();
    let v: string | null = null;
    for (let i = 0; i < this.#pairs.length; i += 2)
      if (this.#pairs[i]!.toLowerCase() === n)
        v = v === null ? this.#pairs[i + 1]! : `${v}, ${this.#pairs[i + 1]}`;
    return v;
  }
  has(name: string): boolean {
    return this.get(name) !== null;
  }
  getSetCookie(): string[] {
    return this.#headers.getSetCookie();
  }
  set(name: string, value: string): void {
    this.changed = true;
    this.#headers.set(name, value);
  }
  append(name: string, value: string): void {
    this.changed = true;
    this.#headers.append(name, value);
  }
  delete(name: string): void {
    this.changed = true;
    this.#headers.delete(name);
  }
  forEach(f: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    this.#headers.forEach((v, k) => {
      f.call(thisArg, v, k, this as unknown as Headers);
    });
  }
  entries() {
    return this.#headers.entries();
  }
  keys() {
    return this.#headers.keys();
  }
  values() {
    return this.#headers.values();
  }
  [Symbol.iterator]() {
    return this.#headers.entries();
  }
}
Object.setPrototypeOf(UpstreamHeaders.prototype, Headers.prototype);

/**
 * A Response for what came upstream, whose Headers and body stream are made only when read: the Node
 * entry writes an untouched one from the raw pairs and the upstream's chunks; a read one behaves like any
 * Response (its body then streams through a Web ReadableStream fed by the same exchange). Taking `body`
 * without reading it (the metrics filter, to hear a watch's end: src/util/ends.ts) keeps the direct write.
 * Like UpstreamHeaders, not a subclass: Response's prototype without its constructor's work per answer.
 */
export class DirectResponse {
  #headers?: UpstreamHeaders;
  #body?: ReadableStream<Uint8Array<ArrayBuffer>> | null;

  constructor(
    readonly status: number,
    readonly pairs: Pairs,
    /** the upstream said Content-Length */
    readonly sized: boolean,
    readonly exchange: Exchange,
  ) {}

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  get statusText(): string {
    return '';
  }
  get type(): ResponseType {
    return 'default';
  }
  get url(): string {
    return '';
  }
  get redirected(): boolean {
    return false;
  }

  /** whether something above changed the headers: the answer is then written from them, not from `pairs` */
  get headersChanged(): boolean {
    return this.#headers?.changed ?? false;
  }

  /** whether something above read (or locked) the body: the answer then goes the Web stream's way */
  get bodyRead(): boolean {
    return !!this.#body?.locked;
  }

  /** the body stream, if someone took it */
  get bodyTaken(): ReadableStream<Uint8Array<ArrayBuffer>> | undefined {
    return this.#body ?? undefined;
  }

  get headers(): Headers {
    this.#headers ??= new UpstreamHeaders(this.pairs);
    return this.#headers as unknown as Headers;
  }

  get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    if (this.#body === undefined) this.#body = webBody(this.exchange);
    return this.#body;
  }

  get bodyUsed(): boolean {
    return this.#body ? this.#body.locked : false;
  }

  private plain(): Response {
    return new Response(this.body, { status: this.status, headers: this.headers });
  }
  arrayBuffer() {
    return this.plain().arrayBuffer();
  }
  async bytes() {
    return new Uint8Array(await this.plain().arrayBuffer());
  }
  text() {
    return this.plain().text();
  }
  json() {
    return this.plain().json();
  }
  blob() {
    return this.plain().blob();
  }
  formData() {
    return this.plain().formData();
  }
  clone(): Response {
    const [a, b] = this.body!.tee();
    this.#body = a;
    return new Response(b, { status: this.status, headers: this.headers });
  }
}
Object.setPrototypeOf(DirectResponse.prototype, Response.prototype);

/** The answer's body as a Web stream (for whoever reads it above the seam): pulled chunk by chunk. */
function webBody(ex: Exchange): ReadableStream<Uint8Array<ArrayBuffer>> {
  const stream = pulledBody(ex, () => bodyEnded(stream));
  webBodies.set(stream, ex);
  // whoever writes it (the Node entry directly, or this stream) says when it ended: src/util/ends.ts
  tellsEnd(stream);
  return stream;
}

/**
 * The exchange behind a body made by {@link DirectResponse.body}: a Response rebuilt around that body
 * (Hono does so when a filter set headers first) can still be written straight while nobody reads it.
 */
const webBodies = new WeakMap<ReadableStream<Uint8Array<ArrayBuffer>>, Exchange>();

export function exchangeOfBody(body: ReadableStream<Uint8Array<ArrayBuffer>> | null): Exchange | undefined {
  const ex = body && !body.locked ? webBodies.get(body) : undefined;
  return ex?.attachable ? ex : undefined;
}

function pulledBody(ex: Exchange, ended: () => void): ReadableStream<Uint8Array<ArrayBuffer>> {
  let wake: (() => void) | undefined;
  const woken = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  let started = false;
  return new ReadableStream<Uint8Array<ArrayBuffer>>(
    {
      pull(controller) {
        const next = new Promise<void>((r) => {
          wake = r;
        });
        if (!started) {
          started = true;
          ex.attach({
            data(chunk) {
              controller.enqueue(
                new Uint8Array(chunk.buffer as ArrayBuffer, chunk.byteOffset, chunk.byteLength),
              );
              woken();
              return false;
            },
            end() {
              controller.close();
              woken();
              ended();
            },
            fail(err) {
              controller.error(neutralError(err));
              woken();
              ended();
            },
          });
        } else ex.resume();
        return next;
      },
      cancel() {
        ex.cancel(new DOMException('the body was cancelled', 'AbortError'));
        ended();
      },
    },
    { highWaterMark: 0 },
  );
}
