/**
 * Upstream watches over HTTP/1.1 on a connection of their own, read by this file's response reader
 * instead of undici's pool. Over HTTP/1.1 every upstream watch holds a socket for as long as it runs
 * (its pool could share none of them), so undici's per-connection client (its Client, Request, llhttp
 * parser and their closures: ≈ 3.5 KiB of heap per idle upstream watch, measured) buys nothing but
 * memory; what an idle watch keeps here is its socket and one small object (issue 16, goal 5).
 * Node's own node:http client was tried as the reader (an adapter over http.request, every test passing)
 * and measured, same run: 1.3–1.7× the RSS per idle merged watch (≈ 33 KiB against 21–23, over the goal's
 * 32), as each connection keeps a native llhttp parser with slots for 32 header names and values (≈ 2.4
 * KiB of RSS each, over 20,000) plus a ClientRequest and an IncomingMessage (≈ 2 KiB of heap). So the
 * framing is read by the fleet's own reader (./node-h1-call.ts), small, unit-tested (node-watch-h1.test.ts)
 * and run by every e2e watch on Node.
 *
 * It is a `Dispatching` as ./node-dispatch.ts reads one: the handler (./node-watch.ts's WatchAnswer) hears
 * the same calls undici's pool makes (onConnect, onHeaders, onData, onComplete, onError), with the same
 * error codes for the timeouts before a head, so what the watch does with its answer does not change.
 *
 * node.ts opens the connections (node:net and node:tls are its to import); ./node-h1-call.ts reads them.
 * The request says `connection: close`: a watch's connection is not reused (a resume opens a new one);
 * the next watch may take a spare connection already open (./node-watch-spare.ts).
 */
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import {
  connectTimeoutMs,
  type Dispatching,
  failOpen,
  h1Request,
  type WatchCallHandler,
  type WatchDispatchOptions,
} from './node-dispatch.ts';
import { H1Call, type H1CallOptions, type WatchConnector } from './node-h1-call.ts';
import { resent } from './node-list-h1.ts';
import type { SpareWatchSockets } from './node-watch-spare.ts';

export type { WatchConnect, WatchConnector, WatchSocket } from './node-h1-call.ts';

/** One endpoint's upstream watches over HTTP/1.1 (the endpoint's TLS settings, its open calls). */
export class H1Watches implements Dispatching {
  private readonly open = new Set<H1Call>();
  private readonly done = (c: H1Call) => this.open.delete(c);

  constructor(
    private readonly ep: ResolvedEndpoint,
    private readonly connect: WatchConnector,
    /** a spare connection per host for the next watch (node.ts); none: every watch dials */
    private readonly spares?: SpareWatchSockets,
  ) {}

  dispatch(opts: object, handler: object): boolean {
    const o = opts as WatchDispatchOptions;
    const h = handler as WatchCallHandler;
    const r = h1Request(o, h, true);
    if (!r) return true;
    // the call as the handler's abort reaches it (a retry makes a new one): a holder of its own, so the
    // abort, kept by an idle watch for its life, keeps no request head or options (≈ 0.9 KiB a watch)
    const now: { call?: H1Call } = {};
    this.send(now, r.to, r.head, o.headersTimeout ?? 0, h, false);
    h.onConnect((err) => now.call?.fail(err));
    return true;
  }

  private send(
    now: { call?: H1Call },
    to: { tls: boolean; host: string; port: number },
    head: string,
    headersMs: number,
    h: WatchCallHandler,
    fresh: boolean,
  ): void {
    const ep = this.ep;
    const at = { tls: to.tls, host: to.host, port: to.port, ep };
    const c: H1CallOptions = { tls: to.tls, connectMs: connectTimeoutMs(ep), headersMs };
    // the call opens its connection, its reads handed to it: a spare whose handshake is done
    // (./node-watch-spare.ts), or a new one; a blackholed host fails within the endpoint's timeout too
    // (as the pool's connect timeout). `reused` is read by the call once its connection is there.
    const opens = (reader: H1Call) => {
      if (fresh || !this.spares) return this.connect(at, reader);
      const got = this.spares.open(at, reader);
      if (got.ready) {
        c.reused = true;
        // a spare the server closed just as the request went out (nothing of an answer read): once more
        // on a new connection, as a kept list connection (a watch's GET may be sent again)
        c.retry = (err) => {
          if (!resent(err)) return false;
          this.send(now, to, head, headersMs, h, true);
          return true;
        };
      }
      return got.socket;
    };
    let call: H1Call;
    try {
      call = new H1Call(opens, h, this.done, c);
    } catch (err) {
      h.onError(err as Error);
      return;
    }
    now.call = call;
    this.open.add(call);
    if (!call.over) call.socket.write(head, 'latin1');
  }

  /** ends every open call and spare connection (the transport closes) */
  close(): void {
    this.spares?.close();
    failOpen(this.open);
  }
}
