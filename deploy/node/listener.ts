/**
 * The Node entry's own way in for the bulk of requests (./http.ts): a GET or HEAD with a plain target and
 * Host, which has no body to stream, lands here instead of @hono/node-server's listener. Measured on the
 * passthrough (issue 16): the adapter's Request proxy, its close handler and AbortController, and its
 * async response writer (three awaits before a byte leaves) were ≈ 10 µs of CPU a request, and its close
 * handler ≈ 0.75 KiB held by every idle watch. Here:
 * - the request is a {@link NodeGetRequest}: method, url and headers read from what Node parsed, no
 *   body, and a signal made only when asked (then one `close` listener on the response);
 * - the answer is written by ./http.ts's streamed writer, or by {@link writeAnswer} (no body, or a body
 *   of known length), with one await between the handler's answer and the write.
 * Anything else (a body, an absolute-form target, one the WHATWG parser would rewrite: percent signs,
 * dot segments, an unusual Host) takes the adapter's way, which builds those URLs and bodies with all
 * its care; both give the same URL for the requests taken here, as the adapter builds a plain one
 * (its `buildUrl`) from scheme, Host and target as they are.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PairHeaders } from '../../src/upstreams/pair-headers.ts';

/** the adapter's own tests for a target and Host it passes on as written (@hono/node-server src/url.ts) */
const PLAIN_TARGET = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;

/** The first Host line's value, as Node's `headers.host` gives it (later ones are dropped), without building those. */
function hostOf(raw: readonly string[]): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i]!;
    if (k.length === 4 && k.toLowerCase() === 'host') return raw[i + 1];
  }
  return undefined;
}

/**
 * A GET or HEAD request as a Web Request, for the readers the fleet has: `method`, `url`, `headers` (a
 * PairHeaders over the parsed lines), `body` (null), `signal` (aborted when the response closes before
 * it is finished, as the adapter's). What else a reader asks (`clone`, `text`, …) is a real Request made
 * then. Its prototype is Request's, so `instanceof Request` holds.
 */
export class NodeGetRequest {
  readonly body = null;
  readonly bodyUsed = false;
  readonly headers: Headers;
  #ac?: AbortController;
  #real?: Request;

  constructor(
    readonly method: string,
    readonly url: string,
    raw: readonly string[],
    private readonly out: ServerResponse,
  ) {
    this.headers = new PairHeaders(raw) as unknown as Headers;
  }

  get signal(): AbortSignal {
    if (!this.#ac) {
      const ac = new AbortController();
      this.#ac = ac;
      const out = this.out;
      if (out.destroyed && !out.writableFinished)
        ac.abort(new Error('Client connection prematurely closed.'));
      // `on`, not `once`: a response closes once, and a watch would hold once's wrapper as long as it runs
      else
        out.on('close', () => {
          if (!out.writableFinished) ac.abort(new Error('Client connection prematurely closed.'));
        });
    }
    return this.#ac.signal;
  }

  /** the same request as a real one, for the rare reader of anything else */
  get real(): Request {
    this.#real ??= new Request(this.url, {
      method: this.method,
      headers: new Headers(this.headers),
      signal: this.signal,
    });
    return this.#real;
  }
}
for (const k of ['cache', 'credentials', 'destination', 'duplex', 'integrity', 'mode', 'redirect'].concat([
  'referrer',
  'referrerPolicy',
  'keepalive',
]))
  Object.defineProperty(NodeGetRequest.prototype, k, {
    get(this: NodeGetRequest) {
      return (this.real as unknown as Record<string, unknown>)[k];
    },
  });
for (const k of ['clone', 'text', 'json', 'arrayBuffer', 'blob', 'formData', 'bytes'])
  Object.defineProperty(NodeGetRequest.prototype, k, {
    value(this: NodeGetRequest) {
      return (this.real as unknown as Record<string, () => unknown>)[k]!();
    },
  });
Object.setPrototypeOf(NodeGetRequest.prototype, Request.prototype);

/** The request as a {@link NodeGetRequest}, or undefined when it is the adapter's to build (see the module comment). */
export function plainRequest(incoming: IncomingMessage, out: ServerResponse): Request | undefined {
  const method = incoming.method;
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const target = incoming.url ?? '';
  if (!PLAIN_TARGET.test(target) || DOT_SEGMENT.test(target)) return undefined;
  const raw = incoming.rawHeaders;
  const host = hostOf(raw);
  if (host === undefined || !PLAIN_HOST.test(host)) return undefined;
  const scheme = (incoming.socket as { encrypted?: boolean } | null)?.encrypted ? 'https' : 'http';
  return new NodeGetRequest(method, `${scheme}://${host}${target}`, raw, out) as unknown as Request;
}

/** what the adapter gives a body without a Content-Type */
const DEFAULT_CONTENT_TYPE = 'text/plain; charset=UTF-8';

/**
 * An answer ./http.ts's streamed writer left (no body, or a Web stream body of known length), as the
 * adapter writes it: its headers (Set-Cookie one line each, a default Content-Type for a body), then the
 * body with backpressure. A body failing midway cuts the connection, as on the streamed path.
 */
export function writeAnswer(
  res: Response,
  out: ServerResponse,
  headersOf: (res: Response) => Record<string, string | string[]>,
): void {
  const headers = headersOf(res);
  const body = res.body;
  if (body && headers['content-type'] === undefined) headers['content-type'] = DEFAULT_CONTENT_TYPE;
  out.writeHead(res.status, headers);
  if (!body) {
    out.end();
    return;
  }
  const reader = body.getReader();
  out.on('close', () => void reader.cancel().catch(() => {}));
  const pump = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return void out.end();
      if (!out.write(value)) await drainedOrClosed(out);
      if (out.destroyed) return;
    }
  };
  pump().catch((err: Error) => out.destroy(err));
}

/** A handler that threw or rejected: an empty 500 (504 for a timeout), as the adapter answers it. */
export function writeFailure(err: unknown, out: ServerResponse): void {
  const timeout =
    err instanceof Error && (err.name === 'TimeoutError' || err.constructor.name === 'TimeoutError');
  if (out.headersSent) {
    out.destroy(err instanceof Error ? err : undefined);
    return;
  }
  out.writeHead(timeout ? 504 : 500).end();
}

/**
 * Settles when `out` can take more (drain) or never will (close), whichever comes first; the other
 * listener is removed, so a long body written piece by piece does not pile them up.
 */
export function drainedOrClosed(out: ServerResponse): Promise<void> {
  return new Promise<void>((r) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      r();
    };
    out.once('drain', done);
    out.once('close', done);
  });
}
