/**
 * How bytes reach an upstream. The platform picks the implementation: Node uses undici with one pooled
 * agent per upstream (src/platform/node.ts), the worker runtime uses its `fetch` (below). Everything
 * above this seam sees Web `Response`s with streaming bodies.
 */
import type { ResolvedEndpoint } from './endpoint.ts';

export interface UpstreamRequest {
  method: string;
  /** absolute URL */
  url: string;
  headers: Headers;
  /**
   * Header lines sent exactly as listed, one line each, after `headers` (Impersonate-Group repeats: kube
   * reads each line as one group, and Fetch's Headers would join repeated values with ", " when read).
   */
  headerLines?: ReadonlyArray<readonly [string, string]>;
  body: ReadableStream<Uint8Array> | Uint8Array | string | null;
  /** the caller went away: abort the request, and the response body if it is streaming */
  signal?: AbortSignal;
  /**
   * the body is read by pulling, chunk by chunk, by one reader that may wait long before its next read
   * (a merged list's source, src/util/pulled.ts): the transport may read the connection only as asked
   */
  pulled?: boolean;
  /**
   * time allowed until response headers; past it the transport rejects with HeadersTimeoutError. Bodies
   * are not timed: watch and `logs -f` stream for as long as the client stays.
   */
  timeoutMs: number;
}

export class HeadersTimeoutError extends Error {
  override name = 'HeadersTimeoutError';
}

export interface Transport {
  send(endpoint: ResolvedEndpoint, req: UpstreamRequest): Promise<Response>;
  /**
   * true: this transport only reads the request signal's `aborted` and adds no listener to it (the Node
   * entry's direct relay, which hears the client go away from its socket), so the caller's signal is
   * handed over as it is instead of one derived from it (see callSignal in ./client.ts)
   */
  readonly signalUnheard?: boolean;
  /**
   * true: a pulled call (`UpstreamRequest.pulled`) hears the request's signal through one listener per
   * signal for all its calls (src/util/abort-hub.ts), so it is handed the caller's signal as it is too
   */
  readonly pulledSignalShared?: boolean;
  /** close pooled connections (graceful shutdown) */
  close?(): Promise<void>;
}

/** A fetcher as the worker runtime offers it (global fetch or an mtls_certificates binding). */
export type Fetcher = (input: string, init: RequestInit) => Promise<Response>;

/**
 * Transport over the Fetch API. Used on the worker runtime, and by tests that reach simulated clusters
 * in-process. `fetchers` maps an mTLS binding name to the binding's fetch.
 */
export function fetchTransport(defaultFetch: Fetcher, fetchers: Record<string, Fetcher> = {}): Transport {
  return {
    async send(endpoint, req) {
      const f = endpoint.mtlsBinding ? fetchers[endpoint.mtlsBinding] : defaultFetch;
      if (!f) throw new Error(`mTLS certificate binding "${endpoint.mtlsBinding}" is not bound`);
      // the Fetch API computes Content-Length (or chunks) itself and refuses a caller-set one
      const headers = new Headers(req.headers);
      headers.delete('content-length');
      // workerd sends each appended value as its own line (Node's fetch would join them: Node uses undici.request)
      for (const [k, v] of req.headerLines ?? []) headers.append(k, v);
      // one controller for both reasons to stop: the caller left (always), no headers in time (until
      // headers arrive: the timer is cleared then, so a streaming body is never cut by it)
      const ac = new AbortController();
      const caller = req.signal;
      if (caller?.aborted) ac.abort(caller.reason);
      else caller?.addEventListener('abort', () => ac.abort(caller.reason), { once: true });
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ac.abort(new HeadersTimeoutError('no response headers in time'));
      }, req.timeoutMs);
      const init: RequestInit & { duplex?: 'half' } = {
        method: req.method,
        headers,
        body: req.body as BodyInit | null,
        signal: ac.signal,
        redirect: 'manual',
      };
      if (req.body instanceof ReadableStream) init.duplex = 'half';
      try {
        return await f(req.url, init);
      } catch (err) {
        throw timedOut ? new HeadersTimeoutError('no response headers in time') : err;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
