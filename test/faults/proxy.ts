/**
 * A fault-injecting HTTP proxy for the tests: put it between the fleet (Node or workerd) and a simulated
 * cluster. It listens on an OS-picked loopback port, forwards to one target URL, records every request,
 * and for each request picks at most one fault by rule (method / path / query, "the nth matching one").
 *
 * The proxy writes the response bytes to the client socket itself (status line, headers, chunk framing,
 * optional gzip), so every fault acts on exactly the bytes that go on the wire: "cut after 40 body bytes"
 * counts chunk-size lines and compressed bytes, as a broken network would. Each response closes its
 * connection (`Connection: close`): a fault never leaks into the next request on a reused socket.
 */
import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import net from 'node:net';
import tls from 'node:tls';
import { createGzip, type Gzip, constants as zc } from 'node:zlib';
import { type Fault, faultName, statusBody } from './faults.ts';

export type { Fault } from './faults.ts';

/** what a rule matches; every given field must match */
export interface Match {
  method?: string;
  /** the path (no query); a string matches as a prefix */
  path?: string | RegExp;
  /** query parameters: `true` = present, a string = equal, a RegExp = matches */
  query?: Record<string, string | RegExp | true | false>;
  /** any predicate on the recorded request */
  when?: (r: RecordedRequest) => boolean;
}

export interface Rule extends Match {
  fault: Fault;
  /** apply from the nth matching request on (1-based; default 1) */
  nth?: number;
  /** how many matching requests get the fault (default 1; Infinity: all from nth on) */
  times?: number;
}

export interface RecordedRequest {
  method: string;
  /** path and query as received */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  at: number;
  /** the fault applied to it, if any */
  fault?: string;
  /** whether the request was forwarded to the target */
  forwarded: boolean;
}

export interface RuleHandle {
  /** requests that matched the rule so far */
  readonly matched: number;
  /** requests the fault was applied to so far */
  readonly applied: number;
  remove(): void;
}

export interface FaultProxyOptions {
  /** gzip responses (with a sync flush per upstream write) when the client accepts gzip, as kube-apiserver does */
  gzip?: boolean;
  /**
   * for an https target (a real kube-apiserver): the CA its serving certificate is checked against, and
   * the client certificate the proxy presents (the identity the target authorizes; the proxy's own
   * clients speak plain HTTP to it, so faults act on the plain bytes they read)
   */
  upstreamTls?: { ca: string; cert?: string; key?: string };
}

export interface FaultProxy {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** add a rule; rules are tried in order, the first whose count says "apply" wins */
  add(rule: Rule): RuleHandle;
  clear(): void;
  /** requests whose connection is still open on either side (for leak checks) */
  openSockets(): number;
  /**
   * cuts every connection open now (a watch or a long list mid-stream) both ways, as a network failure
   * would; rules act on requests as they come, this on those already under way. Returns how many.
   */
  sever(): number;
  close(): Promise<void>;
}

interface LiveRule {
  rule: Rule;
  matched: number;
  applied: number;
}

export function matches(m: Match, r: RecordedRequest): boolean {
  if (m.method && m.method.toUpperCase() !== r.method) return false;
  if (m.path !== undefined) {
    if (typeof m.path === 'string' ? !r.path.startsWith(m.path) : !m.path.test(r.path)) return false;
  }
  for (const [k, want] of Object.entries(m.query ?? {})) {
    const got = r.query.get(k);
    if (want === true ? got === null : want === false ? got !== null : got === null) return false;
    if (typeof want === 'string' && got !== want) return false;
    if (want instanceof RegExp && !want.test(got ?? '')) return false;
  }
  return !m.when || m.when(r);
}

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te']);

export async function startFaultProxy(target: string, opts: FaultProxyOptions = {}): Promise<FaultProxy> {
  const t = new URL(target);
  const secure = t.protocol === 'https:';
  const port = Number(t.port || (secure ? 443 : 80));
  const tlsOpts = { ca: opts.upstreamTls?.ca, cert: opts.upstreamTls?.cert, key: opts.upstreamTls?.key };
  const rules: LiveRule[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const upstreams = new Set<http.ClientRequest | Socket>();

  const pick = (r: RecordedRequest): Fault | undefined => {
    for (const lr of rules) {
      if (!matches(lr.rule, r)) continue;
      lr.matched++;
      const from = lr.rule.nth ?? 1;
      if (lr.matched >= from && lr.applied < (lr.rule.times ?? 1)) {
        lr.applied++;
        return lr.rule.fault;
      }
    }
    return undefined;
  };

  const record = (req: http.IncomingMessage): RecordedRequest => {
    const u = new URL(req.url ?? '/', 'http://proxy');
    const r: RecordedRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      path: u.pathname,
      query: u.searchParams,
      headers: req.headers,
      at: Date.now(),
      forwarded: false,
    };
    requests.push(r);
    return r;
  };

  const server = http.createServer({ keepAlive: false });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  server.on('clientError', (_e, s) => s.destroy());

  server.on('request', (req, res) => {
    const rec = record(req);
    const fault = pick(rec);
    if (fault) rec.fault = faultName(fault);
    const sock = req.socket;
    // the proxy writes raw bytes; keep Node's own response machinery out of the way
    res.detachSocket(sock);
    if (fault?.kind === 'refuse') {
      sock.destroy();
      return;
    }
    if (fault?.kind === 'rst') {
      sock.resetAndDestroy();
      return;
    }
    if (fault?.kind === 'status') {
      req.resume();
      const body = fault.body === null ? '' : (fault.body ?? statusBody(fault.code, fault.message));
      const head =
        `HTTP/1.1 ${fault.code} ${http.STATUS_CODES[fault.code] ?? 'Status'}\r\n` +
        (body ? 'Content-Type: application/json\r\n' : '') +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
      sock.end(head + body);
      return;
    }
    if (fault?.kind === 'garbage' && fault.where === 'head') {
      req.resume();
      sock.end(Buffer.from(fault.bytes ?? 'SSH-2.0-garbage\r\n\x00\xff{{{'));
      return;
    }
    rec.forwarded = true;
    forward(req, sock, fault);
  });

  server.on('upgrade', (req: http.IncomingMessage, sock: Socket, head: Buffer) => {
    const rec = record(req);
    const fault = pick(rec);
    if (fault) rec.fault = faultName(fault);
    if (fault?.kind === 'refuse') {
      sock.destroy();
      return;
    }
    if (fault?.kind === 'rst') {
      sock.resetAndDestroy();
      return;
    }
    if (fault?.kind === 'status') {
      const body = fault.body === null ? '' : (fault.body ?? statusBody(fault.code, fault.message));
      sock.end(
        `HTTP/1.1 ${fault.code} ${http.STATUS_CODES[fault.code] ?? 'Status'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    rec.forwarded = true;
    // upgrades (exec, port-forward) are piped as they are, both ways
    const onConnect = () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const k = req.rawHeaders[i]!;
        lines.push(`${k}: ${k.toLowerCase() === 'host' ? t.host : req.rawHeaders[i + 1]}`);
      }
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) up.write(head);
      up.pipe(sock);
      sock.pipe(up);
    };
    const up = secure
      ? tls.connect({ host: t.hostname, port, ...tlsOpts, ALPNProtocols: ['http/1.1'] }, onConnect)
      : net.connect(port, t.hostname, onConnect);
    upstreams.add(up);
    const done = () => {
      upstreams.delete(up);
      up.destroy();
      sock.destroy();
    };
    up.on('error', done).on('close', done);
    sock.on('error', done).on('close', done);
  });

  function forward(req: http.IncomingMessage, sock: Socket, fault: Fault | undefined): void {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (k === 'host' || k === 'connection' || k === 'keep-alive') continue;
      headers[k] = v;
    }
    headers.host = t.host;
    const acceptsGzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    if (opts.gzip) delete headers['accept-encoding'];
    const up = (secure ? https : http).request({
      ...(secure ? tlsOpts : {}),
      host: t.hostname,
      port,
      method: req.method,
      path: req.url,
      headers,
      agent: false,
    });
    upstreams.add(up);
    const drop = () => {
      upstreams.delete(up);
      up.destroy();
    };
    sock.on('close', drop);
    let wire: Wire | undefined;
    up.on('error', () => {
      // the upstream went away (not stopped by a fault): close as a dead host does
      if (wire?.stopped) return;
      if (!sock.destroyed && sock.bytesWritten === 0) sock.destroy();
      else sock.end();
    });
    up.on('close', () => upstreams.delete(up));
    req.pipe(up);
    up.on('response', (ur) => {
      const gzip = !!opts.gzip && acceptsGzip && !ur.headers['content-encoding'];
      const w = new Wire(sock, fault, timers, () => {
        ur.destroy();
        drop();
      });
      wire = w;
      const length = ur.headers['content-length'];
      const chunked = gzip || length === undefined;
      const lines = [`HTTP/1.1 ${ur.statusCode} ${ur.statusMessage ?? ''}`];
      for (let i = 0; i < ur.rawHeaders.length; i += 2) {
        const k = ur.rawHeaders[i]!;
        const lk = k.toLowerCase();
        if (HOP.has(lk) || (chunked && lk === 'content-length')) continue;
        lines.push(`${k}: ${ur.rawHeaders[i + 1]}`);
      }
      if (gzip) lines.push('Content-Encoding: gzip', 'Vary: Accept-Encoding');
      if (chunked) lines.push('Transfer-Encoding: chunked');
      lines.push('Connection: close');
      w.head(`${lines.join('\r\n')}\r\n\r\n`);
      w.body(ur, chunked, gzip ? createGzip() : undefined);
    });
  }

  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const own = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${own}`,
    port: own,
    requests,
    add(rule) {
      const lr: LiveRule = { rule, matched: 0, applied: 0 };
      rules.push(lr);
      return {
        get matched() {
          return lr.matched;
        },
        get applied() {
          return lr.applied;
        },
        remove() {
          const i = rules.indexOf(lr);
          if (i >= 0) rules.splice(i, 1);
        },
      };
    },
    clear() {
      rules.length = 0;
      requests.length = 0;
    },
    openSockets: () => sockets.size + upstreams.size,
    sever() {
      const n = sockets.size;
      for (const u of upstreams) u.destroy();
      for (const s of sockets) s.destroy();
      return n;
    },
    async close() {
      for (const tm of timers) clearTimeout(tm);
      timers.clear();
      for (const u of upstreams) u.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((res) => server.close(() => res()));
      // 'close' events of destroyed sockets come a tick later
      for (let i = 0; i < 100 && sockets.size + upstreams.size > 0; i++)
        await new Promise((r) => setTimeout(r, 10));
    },
  };
}

/**
 * The client side of one response: every byte goes through `send`, which counts the wire bytes and
 * applies the fault (stall, cut, RST, drip) exactly at its byte or event.
 */
class Wire {
  private headBytes = 0;
  private bodyBytes = 0;
  private events = 0;
  stopped = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly sock: Socket,
    private readonly fault: Fault | undefined,
    private readonly timers: Set<NodeJS.Timeout>,
    private readonly stopUpstream: () => void,
  ) {}

  head(text: string): void {
    const f = this.fault;
    const buf = Buffer.from(text);
    if (f?.kind === 'garbage' && f.where === 'head') {
      this.finish('end');
      return;
    }
    if ((f?.kind === 'stall' || f?.kind === 'cut' || f?.kind === 'rstAfter') && f.phase === 'headers') {
      this.raw(buf.subarray(0, f.bytes), 'headers');
      this.finish(f.kind === 'stall' ? 'stall' : f.kind === 'cut' ? 'end' : 'rst');
      return;
    }
    this.raw(buf, 'headers');
  }

  body(src: http.IncomingMessage, chunked: boolean, gz: Gzip | undefined): void {
    const f = this.fault;
    if (this.stopped) return;
    if (f?.kind === 'eofAfterHeaders') {
      this.finish('end');
      return;
    }
    if (f?.kind === 'garbage') {
      const junk = Buffer.from(f.bytes ?? '\x00\xff<html>not json}}\n');
      this.raw(chunked ? frame(junk) : junk, 'body');
      this.finish('end');
      return;
    }
    const emit = (piece: Buffer) => {
      if (piece.length) this.enqueue(chunked ? frame(piece) : piece);
    };
    gz?.on('data', emit);
    const put = (piece: Buffer, flush: boolean): Promise<void> =>
      new Promise((res) => {
        if (!gz) {
          emit(piece);
          return res();
        }
        gz.write(piece);
        if (flush) gz.flush(zc.Z_SYNC_FLUSH, () => res());
        else res();
      });
    let chain = Promise.resolve();
    src.on('data', (d: Buffer) => {
      chain = chain.then(async () => {
        if (this.stopped) return;
        const k = this.eventCut();
        if (k === undefined) return put(d, true);
        // count NDJSON lines in the decoded content: the cut lands right after the kth event
        let from = 0;
        for (let i = d.indexOf(10); i >= 0; i = d.indexOf(10, i + 1)) {
          this.events++;
          if (this.events >= k) {
            await put(d.subarray(from, i + 1), true);
            const f = this.fault!;
            if (f.kind === 'statusAfterEvents') {
              const ev = `${JSON.stringify({ type: 'ERROR', object: JSON.parse(statusBody(f.code, f.message)) })}\n`;
              await put(Buffer.from(ev), true);
            }
            this.enqueueFinish(
              f.kind === 'statusAfterEvents'
                ? 'end'
                : f.kind === 'rstAfterEvents'
                  ? 'rst'
                  : f.kind === 'stallAfterEvents'
                    ? 'stall'
                    : 'end',
            );
            return;
          }
        }
        await put(d.subarray(from), true);
        from = d.length;
      });
    });
    src.on('end', () => {
      chain = chain.then(async () => {
        if (this.stopped) return;
        if (gz) {
          const ended = once(gz, 'end');
          gz.end();
          await ended;
        }
        if (chunked) this.enqueue(Buffer.from('0\r\n\r\n'));
        this.enqueueFinish('end');
      });
    });
    src.on('error', () => this.finish('end'));
  }

  private eventCut(): number | undefined {
    const f = this.fault;
    if (!f) return undefined;
    if (f.kind === 'cutAfterEvents' || f.kind === 'rstAfterEvents' || f.kind === 'stallAfterEvents')
      return f.events;
    if (f.kind === 'statusAfterEvents') return f.events;
    return undefined;
  }

  /** wire bytes go out in order, one slice at a time (drip waits between slices) */
  private enqueue(buf: Buffer): void {
    this.queue = this.queue.then(() => this.send(buf));
  }

  private enqueueFinish(how: 'end' | 'rst' | 'stall'): void {
    this.queue = this.queue.then(() => this.finish(how));
  }

  private async send(buf: Buffer): Promise<void> {
    const f = this.fault;
    if (this.stopped) return;
    if ((f?.kind === 'stall' || f?.kind === 'cut' || f?.kind === 'rstAfter') && f.phase === 'body') {
      const room = f.bytes - this.bodyBytes;
      if (buf.length >= room) {
        this.raw(buf.subarray(0, room), 'body');
        this.finish(f.kind === 'stall' ? 'stall' : f.kind === 'cut' ? 'end' : 'rst');
        return;
      }
    }
    if (f?.kind === 'drip') {
      for (let i = 0; i < buf.length && !this.stopped; i += f.bytes) {
        this.raw(buf.subarray(i, i + f.bytes), 'body');
        await new Promise<void>((res) => {
          const tm = setTimeout(() => {
            this.timers.delete(tm);
            res();
          }, f.intervalMs);
          this.timers.add(tm);
        });
      }
      return;
    }
    this.raw(buf, 'body');
  }

  private raw(buf: Buffer, phase: 'headers' | 'body'): void {
    if (this.stopped || this.sock.destroyed || !buf.length) return;
    if (phase === 'headers') this.headBytes += buf.length;
    else this.bodyBytes += buf.length;
    this.sock.write(buf);
  }

  finish(how: 'end' | 'rst' | 'stall'): void {
    if (this.stopped) return;
    this.stopped = true;
    if (how === 'end') this.sock.end();
    else if (how === 'rst') {
      // after the bytes were delivered: an RST racing its own data reads as a FIN on loopback
      this.sock.write('', () => {
        const tm = setTimeout(() => {
          this.timers.delete(tm);
          this.sock.resetAndDestroy();
        }, 25);
        this.timers.add(tm);
      });
    }
    this.stopUpstream();
    // stall: the socket stays open and silent until the client gives up or the proxy closes
  }
}

function frame(piece: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
}
