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

/** A kept connection: what ends it while it waits (its close, an unexpected byte, its idle time). */
class Kept {
  readonly timer: ReturnType<typeof setTimeout>;
  readonly drop = () => this.pool.drop(this);

  constructor(
    readonly socket: WatchSocket,
    private readonly pool: H1Lists,
    idleMs: number,
  ) {
    socket.on('data', this.drop);
    socket.on('end', this.drop);
    socket.on('error', this.drop);
    socket.on('close', this.drop);
    this.timer = setTimeout(this.drop, idleMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** its listeners off (taken for a call, or dropped) */
  release(): WatchSocket {
    clearTimeout(this.timer);
    const s = this.socket;
    s.off('data', this.drop);
    s.off('end', this.drop);
    s.off('error', this.drop);
    s.off('close', this.drop);
    return s;
  }
}

/** One endpoint's pulled GETs over HTTP/1.1: its kept connections and its open calls. */
export class H1Lists implements Dispatching {
  private readonly open = new Set<H1Call>();
  private readonly kept: Kept[] = [];
  private readonly done = (c: H1Call) => this.open.delete(c);
  private readonly keep = (socket: WatchSocket, idleMs: number) => {
    if (this.closed || this.kept.length >= MAX_KEPT || this.budget.kept >= this.budget.max) {
      socket.destroy();
      return;
    }
    this.budget.kept++;
    socket.unref();
    // a call that paused its reads may end paused: a kept connection must hear its close
    socket.resume();
    this.kept.push(new Kept(socket, this, idleMs));
  };
  private closed = false;

  constructor(
    private readonly ep: ResolvedEndpoint,
    private readonly connect: ListConnector,
    private readonly budget: KeptBudget = processKept,
  ) {}

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
      const k = fresh ? undefined : this.kept.pop();
      let socket: WatchSocket;
      if (k) {
        this.budget.kept--;
        socket = k.release();
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
      call = new H1Call(socket, h, this.done, c);
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
    k.release().destroy();
  }

  /** ends every open call and kept connection (the transport closes) */
  close(): void {
    this.closed = true;
    failOpen(this.open);
    this.budget.kept -= this.kept.length;
    for (const k of this.kept.splice(0)) k.release().destroy();
  }
}

/** what a kept connection's failure before any answer byte may be sent again after: its close or reset */
export function resent(err: Error): boolean {
  const code = (err as { code?: string }).code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}
