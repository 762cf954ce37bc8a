/**
 * One spare watch connection per endpoint that just served a watch (issue 33, the first watch event): an
 * HTTP/1.1 watch holds its connection for its whole life, so every new watch dialled TCP and TLS (a
 * resumed session: 11-13 ms on the loaded real bed) before its request could go out. Here the next watch
 * to the same host takes a connection whose handshake is done, and a new spare is dialled behind it.
 *
 * Bounded: a spare is dialled only when a watch opens (an endpoint no watch uses has none), one per
 * watch connection it opened to a host and port (at most MAX_SPARES_HOST), at most MAX_SPARES_ALL in the
 * process, closed after SPARE_IDLE_MS unused (below
 * kube-apiserver's 32 s ReadHeaderTimeout, after which the server drops a connection that sent nothing),
 * and at once on any byte, end or error while it waits; one that expires is replaced while its host served
 * a watch in the last SPARE_KEEP_MS. It is unreferenced while it waits (it keeps no
 * process alive). Node only: the Workers runtime and the relays do not come here.
 */
import type { WatchConnect, WatchConnector, WatchSocket } from './node-h1-call.ts';

/** how long a spare waits for a watch before it is closed */
export const SPARE_IDLE_MS = 15_000;

/**
 * spares per host and port at most: a watch dials a host once per cluster behind it (Karmada's cluster
 * proxy: every member through one host), and each of those dials leaves one spare for the next watch
 */
export const MAX_SPARES_HOST = 8;

/** spares of every endpoint together, at most (a merged watch over 5,000 clusters would double its sockets) */
export const MAX_SPARES_ALL = 256;

/** how long after the last watch to a host its spares are replaced as they expire */
export const SPARE_KEEP_MS = 5 * 60_000;

/** how long after a watch took (or dialled past) the spare the next one is dialled */
export const REFILL_MS = 1000;

const processSpares = { n: 0 };

/**
 * How the process's watch connections were opened, counted since it started: on a spare whose handshake
 * was done, on one still shaking hands, on a new dial (none waited). Read by the real bed's bench row,
 * and by /metrics as {@link spareCounter}.
 */
export const spareCounts = { ready: 0, notReady: 0, none: 0 };

/** {@link spareCounts} as a counter of the fleet's /metrics (bound by deploy/node/server.ts) */
export const spareCounter = {
  name: 'fleet_upstream_watch_connections_total',
  help: 'Upstream HTTP/1.1 watch connections opened since the process started, per result: hit (a spare connection, its handshake done), handshaking (a spare still shaking hands), miss (dialled for the watch: no spare waited).',
  label: 'result',
  read: () => ({ hit: spareCounts.ready, handshaking: spareCounts.notReady, miss: spareCounts.none }),
};

/** where a watch connection's reads go (its H1Call) */
type Reader = Parameters<WatchConnector>[1];

/**
 * Where a connection's reads go: the watch that took it, or before that `idle` (the spare's drop). Made
 * outside the Spare so that its closure keeps this object only: a taken spare is let go, and an idle
 * watch keeps no cleared timer, key or drop of it (≈ 0.3 KiB per upstream watch on a spare).
 */
function forwarder(
  idle: () => void,
): { reader: Reader | undefined; idle: (() => void) | undefined } & Reader {
  const f = {
    reader: undefined as Reader | undefined,
    idle: idle as (() => void) | undefined,
    feed: (b: Parameters<Reader['feed']>[0]) => {
      if (f.reader) f.reader.feed(b);
      else f.idle?.();
    },
  };
  return f;
}

/** A spare connection: its reads go to the watch that takes it; before that, any read ends it. */
class Spare {
  /** the TLS (or TCP) handshake is done: a watch taking it sends its request at once */
  ready = false;
  readonly socket: WatchSocket;
  private readonly reads: ReturnType<typeof forwarder>;
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly drop = () => this.pool.drop(this);

  constructor(
    connect: WatchConnector,
    readonly to: WatchConnect,
    readonly key: string,
    private readonly pool: SpareWatchSockets,
    idleMs: number,
  ) {
    this.reads = forwarder(this.drop);
    this.socket = connect(to, this.reads);
    this.socket.once(to.tls ? 'secureConnect' : 'connect', () => {
      this.ready = true;
    });
    this.socket.on('end', this.drop);
    this.socket.on('error', this.drop);
    this.socket.on('close', this.drop);
    this.socket.unref();
    this.timer = setTimeout(() => this.pool.expire(this), idleMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** its waiting listeners off; its reads go to `reader` from now on */
  take(reader: Reader | undefined): WatchSocket {
    clearTimeout(this.timer);
    this.socket.off('end', this.drop);
    this.socket.off('error', this.drop);
    this.socket.off('close', this.drop);
    this.reads.reader = reader;
    this.reads.idle = undefined;
    return this.socket;
  }
}

/** A watch's connection: a spare (`ready`: its handshake done) or a new one. */
export interface Opened {
  socket: WatchSocket;
  ready: boolean;
  spare: boolean;
}

/** One endpoint's spare watch connections, by host and port (./node-watch-h1.ts owns one). */
export class SpareWatchSockets {
  private readonly spares = new Map<string, Spare[]>();
  /** when a watch last opened a connection to each host (a spare expiring within SPARE_KEEP_MS is replaced) */
  private readonly lastOpen = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly connect: WatchConnector,
    private readonly idleMs = SPARE_IDLE_MS,
    private readonly budget: { n: number; max?: number } = processSpares,
    private readonly keepMs = SPARE_KEEP_MS,
  ) {}

  /**
   * the connection for a watch to `to`, read by `reader`: a spare when there is one (one whose handshake is
   * done first), else a new one; either way one spare is dialled for the next watch
   */
  open(to: WatchConnect, reader: Reader): Opened {
    const key = `${to.tls ? 'tls' : 'tcp'}:${to.host}:${to.port}`;
    this.lastOpen.set(key, Date.now());
    const list = this.spares.get(key);
    const s = list && (list.findLast((x) => x.ready) ?? list.at(-1));
    let opened: Opened;
    if (s) {
      this.forget(s);
      const socket = s.take(reader);
      socket.ref();
      opened = { socket, ready: s.ready, spare: true };
      if (s.ready) spareCounts.ready++;
      else spareCounts.notReady++;
    } else {
      opened = { socket: this.connect(to, reader), ready: false, spare: false };
      spareCounts.none++;
    }
    // the next spare is dialled a while after: its handshake (CPU on both ends) would delay this watch's
    // heads and first events (measured: head decided → first send +15-20 ms dialled at once)
    const t = setTimeout(() => this.refill(key, to), REFILL_MS);
    (t as { unref?: () => void }).unref?.();
    return opened;
  }

  private refill(key: string, to: WatchConnect): void {
    const list = this.spares.get(key) ?? [];
    if (this.closed || list.length >= MAX_SPARES_HOST || this.budget.n >= (this.budget.max ?? MAX_SPARES_ALL))
      return;
    let s: Spare;
    try {
      s = new Spare(this.connect, to, key, this, this.idleMs);
    } catch {
      return;
    }
    list.push(s);
    this.spares.set(key, list);
    this.budget.n++;
  }

  private forget(s: Spare): boolean {
    const list = this.spares.get(s.key);
    const at = list ? list.indexOf(s) : -1;
    if (at < 0) return false;
    list!.splice(at, 1);
    if (!list!.length) this.spares.delete(s.key);
    this.budget.n--;
    return true;
  }

  /**
   * a spare waited its idle time: closed, and replaced while its host served a watch in the last
   * SPARE_KEEP_MS (watches minutes apart, as informers re-watch, still find one; a handshake per host
   * per SPARE_IDLE_MS is what that costs)
   */
  expire(s: Spare): void {
    if (!this.forget(s)) return;
    s.take(undefined).destroy();
    const last = this.lastOpen.get(s.key);
    if (last !== undefined && Date.now() - last < this.keepMs) this.refill(s.key, s.to);
    else if (!this.spares.has(s.key)) this.lastOpen.delete(s.key);
  }

  /** a spare ended, read a byte, or waited too long */
  drop(s: Spare): void {
    if (this.forget(s)) s.take(undefined).destroy();
  }

  /** how many spares wait now (tests) */
  get size(): number {
    let n = 0;
    for (const l of this.spares.values()) n += l.length;
    return n;
  }

  /** how many of them finished their handshake (tests) */
  get ready(): number {
    let n = 0;
    for (const l of this.spares.values()) for (const s of l) if (s.ready) n++;
    return n;
  }

  /** closes every spare; none is dialled after (the transport closes) */
  close(): void {
    this.closed = true;
    for (const l of [...this.spares.values()]) for (const s of [...l]) this.drop(s);
  }
}
