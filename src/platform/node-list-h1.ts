/**
 * A merged list's pulled upstream answers over HTTP/1.1 (./node-list.ts's handler), read by the fleet's
 * own reader (./node-h1-call.ts) on kept-alive connections of its own per endpoint, instead of undici's
 * pool. What undici cost per chunk of a body read by pulling: its wasm parser copying every byte into its
 * memory, a timer re-armed at every resume, and its request bookkeeping; here a chunk is a view of the
 * socket's read handed to the handler.
 *
 * A connection is kept when its answer was read whole and said nothing against it (HTTP/1.1, no
 * `Connection: close`, framed by length or chunks, nothing after it in the read it ended in), for 30 s or
 * what the answer's `Keep-Alive: timeout` says less a second (as undici's pool), unreferenced while it
 * waits, newest first. A kept connection the server closed just as a request went out on it (nothing of
 * an answer read) sends the request once more on a new connection: a GET may be sent again. Anything
 * else ends the connection with the call (a cut, a timeout, a cancel: nothing of it is reused).
 */
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import {
  connectTimeoutMs,
  type Dispatching,
  failOpen,
  h1Request,
  transportClosed,
  type WatchCallHandler,
  type WatchDispatchOptions,
} from './node-dispatch.ts';
import { H1Call, type H1CallOptions, type ListConnector, type WatchSocket } from './node-h1-call.ts';

/** kept connections per endpoint at most (more are closed when their call ends) */
const MAX_KEPT = 256;

/**
 * Kept connections of every endpoint together, at most: per endpoint alone, a fleet of 5,000 clusters
 * could keep 1.28 million idle sockets (each a file descriptor); one merged list over all of them keeps
 * 5,000, and several at once more, so the process's idle sockets stay under this however wide the fleet
 * (docs/bench-scale.md: the file descriptors a request needs).
 */
export const MAX_KEPT_ALL = 8192;

/** How many connections the process keeps now, and how many it may (shared by every endpoint's H1Lists). */
export interface KeptBudget {
  kept: number;
  readonly max: number;
}

const processKept: KeptBudget = { kept: 0, max: MAX_KEPT_ALL };

/**
 * A kept connection: what ends it while it waits (its close, an unexpected byte), and when its idle time
 * is up (`until`: the endpoint's one sweep timer ends it then, or whoever would take it after). A timer
 * per kept connection was a Timeout made, unref'd and cleared per cluster of every merged list.
 */
class Kept {
  readonly drop = () => this.pool.drop(this);

  constructor(
    /** the last call on it, whose listeners hand any event of it to `drop` meanwhile */
    readonly call: H1Call,
    private readonly pool: H1Lists,
    readonly until: number,
  ) {
    call.park(this.drop);
  }

  get socket(): WatchSocket {
    return this.call.socket;
  }
}

/** One endpoint's pulled GETs over HTTP/1.1: its kept connections and its open calls. */
export class H1Lists implements Dispatching {
  private readonly open = new Set<H1Call>();
  private readonly kept: Kept[] = [];
  private readonly done = (c: H1Call) => this.open.delete(c);
  private readonly keep = (call: H1Call, idleMs: number) => {
    const socket = call.socket;
    if (this.closed || this.kept.length >= MAX_KEPT || this.budget.kept >= this.budget.max) {
      socket.destroy();
      return;
    }
    this.budget.kept++;
    socket.unref();
    // a call that paused its reads may end paused: a kept connection must hear its close
    socket.resume();
    const until = performance.now() + idleMs;
    this.kept.push(new Kept(call, this, until));
    if (this.sweepAt === undefined || until < this.sweepAt) this.armSweep(until);
  };
  private closed = false;
  /** when the sweep timer fires (undefined: none armed) */
  private sweepAt: number | undefined;
  private sweepTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly sweep = () => {
    this.sweepTimer = undefined;
    this.sweepAt = undefined;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const k of [...this.kept])
      if (k.until <= now) this.drop(k);
      else next = Math.min(next, k.until);
    if (next !== Number.POSITIVE_INFINITY) this.armSweep(next);
  };

  constructor(
    private readonly ep: ResolvedEndpoint,
    private readonly connect: ListConnector,
    private readonly budget: KeptBudget = processKept,
  ) {}

  private armSweep(at: number): void {
    if (this.sweepTimer !== undefined) clearTimeout(this.sweepTimer);
    this.sweepAt = at;
    this.sweepTimer = setTimeout(this.sweep, Math.max(0, at - performance.now()));
    (this.sweepTimer as { unref?: () => void }).unref?.();
  }

  /** the newest kept connection whose idle time is not up (those past it are closed) */
  private take(): Kept | undefined {
    for (let k = this.kept.pop(); k; k = this.kept.pop()) {
      this.budget.kept--;
      if (k.until > performance.now()) return k;
      k.socket.destroy();
    }
    return undefined;
  }

  dispatch(opts: object, handler: object): boolean {
    const o = opts as WatchDispatchOptions;
    const h = handler as WatchCallHandler;
    if (this.closed) {
      h.onError(transportClosed());
      return true;
    }
    const r = h1Request(o, h, false);
    if (!r) return true;
    const { to, head } = r;
    let call: H1Call | undefined;
    const send = (fresh: boolean): void => {
      const k = fresh ? undefined : this.take();
      let socket: WatchSocket;
      if (k) {
        socket = k.socket;
        socket.ref();
      } else {
        try {
          socket = this.connect({ tls: to.tls, host: to.host, port: to.port, ep: this.ep });
        } catch (err) {
          h.onError(err as Error);
          return;
        }
      }
      const c: H1CallOptions = {
        tls: to.tls,
        connectMs: connectTimeoutMs(this.ep),
        headersMs: o.headersTimeout ?? 0,
        keep: this.keep,
      };
      if (k) {
        c.reused = true;
        c.retry = (err) => {
          if (!resent(err)) return false;
          send(true);
          return true;
        };
      }
      call = k ? k.call.again(h, this.done, c) : new H1Call(socket, h, this.done, c);
      this.open.add(call);
      if (!call.over) socket.write(head, 'latin1');
    };
    send(false);
    h.onConnect((err) => call?.fail(err));
    return true;
  }

  /** a kept connection ended while it waited */
  drop(k: Kept): void {
    const at = this.kept.indexOf(k);
    if (at >= 0) {
      this.kept.splice(at, 1);
      this.budget.kept--;
    }
    k.socket.destroy();
  }

  /** ends every open call and kept connection (the transport closes) */
  close(): void {
    this.closed = true;
    failOpen(this.open);
    this.budget.kept -= this.kept.length;
    for (const k of this.kept.splice(0)) k.socket.destroy();
    if (this.sweepTimer !== undefined) clearTimeout(this.sweepTimer);
    this.sweepTimer = undefined;
    this.sweepAt = undefined;
  }
}

/** what a kept connection's failure before any answer byte may be sent again after: its close or reset */
export function resent(err: Error): boolean {
  const code = (err as { code?: string }).code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}
