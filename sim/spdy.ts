/**
 * The server side of SPDY/3.1 as the kubelet speaks it to client-go (moby/spdystream): enough for
 * port-forward (`portforward.k8s.io`) and exec/attach over SPDY (`v4.channel.k8s.io`), on a raw upgraded
 * connection or tunnelled inside WebSocket binary messages (`SPDY/3.1+portforward.k8s.io`, kubectl ≥ 1.31).
 *
 * Frames (SPDY draft 3): control frames start with 0x80 0x03, a 16-bit type, 8-bit flags and a 24-bit
 * length; data frames with a 31-bit stream id, 8-bit flags (0x01 FIN) and a 24-bit length. Header blocks
 * are `u32 count, (u32 len, name, u32 len, value)*`, zlib-compressed with the SPDY/3 dictionary, one
 * compression context per direction for the whole connection, each block sync-flushed.
 * - Reading the client's blocks: Web `DecompressionStream('deflate-raw')` has no preset dictionary, so the
 *   dictionary is fed first as a stored deflate block (back-references then resolve into it) and the
 *   first `dictionary.length` bytes of output are skipped; the zlib header and DICTID are stripped.
 * - Writing ours: stored (uncompressed) deflate blocks, each followed by an empty stored block (the sync
 *   flush marker a Go reader needs to hand the bytes over); the stream header carries no FDICT.
 * Only Web-standard APIs.
 */

const WORDS = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
];
const TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

const te = new TextEncoder();
const td = new TextDecoder();

/** The SPDY/3 header compression dictionary (1423 bytes, Adler-32 0xe3c6a7c2). */
export const SPDY_DICTIONARY: Uint8Array = (() => {
  const parts: number[] = [];
  for (const w of WORDS) {
    parts.push(0, 0, 0, w.length);
    for (const ch of w) parts.push(ch.charCodeAt(0));
  }
  for (const ch of TAIL) parts.push(ch.charCodeAt(0));
  return new Uint8Array(parts);
})();

export function adler32(b: Uint8Array): number {
  let a = 1;
  let c = 0;
  for (const x of b) {
    a = (a + x) % 65521;
    c = (c + a) % 65521;
  }
  return ((c << 16) | a) >>> 0;
}

export const TYPE_SYN_STREAM = 1;
export const TYPE_SYN_REPLY = 2;
export const TYPE_RST_STREAM = 3;
export const TYPE_SETTINGS = 4;
export const TYPE_PING = 6;
export const TYPE_GOAWAY = 7;
export const TYPE_HEADERS = 8;
export const TYPE_WINDOW_UPDATE = 9;
export const FLAG_FIN = 0x01;
export const RST_CANCEL = 5;
export const RST_PROTOCOL_ERROR = 1;

export type SpdyFrame =
  | { control: true; type: number; flags: number; data: Uint8Array }
  | { control: false; streamId: number; flags: number; data: Uint8Array };

/** Splits a byte stream into frames; keeps an incomplete tail for the next chunk. */
export class FrameReader {
  private buf = new Uint8Array(0);

  push(chunk: Uint8Array): SpdyFrame[] {
    const b = new Uint8Array(this.buf.length + chunk.length);
    b.set(this.buf);
    b.set(chunk, this.buf.length);
    const out: SpdyFrame[] = [];
    let o = 0;
    while (b.length - o >= 8) {
      const len = (b[o + 5]! << 16) | (b[o + 6]! << 8) | b[o + 7]!;
      if (b.length - o < 8 + len) break;
      const flags = b[o + 4]!;
      const data = b.slice(o + 8, o + 8 + len);
      if (b[o]! & 0x80) out.push({ control: true, type: (b[o + 2]! << 8) | b[o + 3]!, flags, data });
      else out.push({ control: false, streamId: u32(b, o) & 0x7fffffff, flags, data });
      o += 8 + len;
    }
    this.buf = b.slice(o);
    return out;
  }
}

export function u32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

function putU32(b: Uint8Array, o: number, v: number): void {
  b[o] = (v >>> 24) & 0xff;
  b[o + 1] = (v >>> 16) & 0xff;
  b[o + 2] = (v >>> 8) & 0xff;
  b[o + 3] = v & 0xff;
}

export function controlFrame(type: number, flags: number, payload: Uint8Array): Uint8Array {
  const f = new Uint8Array(8 + payload.length);
  f[0] = 0x80;
  f[1] = 3;
  f[2] = type >> 8;
  f[3] = type & 0xff;
  f[4] = flags;
  f[5] = (payload.length >> 16) & 0xff;
  f[6] = (payload.length >> 8) & 0xff;
  f[7] = payload.length & 0xff;
  f.set(payload, 8);
  return f;
}

export function dataFrame(streamId: number, flags: number, data: Uint8Array): Uint8Array {
  const f = new Uint8Array(8 + data.length);
  putU32(f, 0, streamId & 0x7fffffff);
  f[4] = flags;
  f[5] = (data.length >> 16) & 0xff;
  f[6] = (data.length >> 8) & 0xff;
  f[7] = data.length & 0xff;
  f.set(data, 8);
  return f;
}

export function encodeHeaderBlock(headers: Iterable<[string, string]>): Uint8Array {
  const pairs = [...headers];
  const parts: Uint8Array[] = [];
  let n = 4;
  for (const [k, v] of pairs) {
    const kb = te.encode(k.toLowerCase());
    const vb = te.encode(v);
    parts.push(kb, vb);
    n += 8 + kb.length + vb.length;
  }
  const out = new Uint8Array(n);
  putU32(out, 0, pairs.length);
  let o = 4;
  for (const p of parts) {
    putU32(out, o, p.length);
    out.set(p, o + 4);
    o += 4 + p.length;
  }
  return out;
}

/** A complete header block at the start of `b`, or undefined when more bytes are needed. */
export function parseHeaderBlock(b: Uint8Array): { headers: Map<string, string>; size: number } | undefined {
  if (b.length < 4) return undefined;
  const n = u32(b, 0);
  let o = 4;
  const headers = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    if (b.length < o + 4) return undefined;
    const kl = u32(b, o);
    if (b.length < o + 8 + kl) return undefined;
    const k = td.decode(b.subarray(o + 4, o + 4 + kl));
    const vl = u32(b, o + 4 + kl);
    o += 8 + kl;
    if (b.length < o + vl) return undefined;
    headers.set(k.toLowerCase(), td.decode(b.subarray(o, o + vl)));
    o += vl;
  }
  return { headers, size: o };
}

/** Our direction: stored deflate blocks, sync-flushed, in one zlib stream without a dictionary. */
export class HeaderCompressor {
  private started = false;

  compress(block: Uint8Array): Uint8Array {
    const parts: number[] = [];
    if (!this.started) {
      parts.push(0x78, 0x01);
      this.started = true;
    }
    const out: Uint8Array[] = [new Uint8Array(parts)];
    for (let o = 0; o < block.length || o === 0; o += 0xffff) {
      const chunk = block.subarray(o, Math.min(block.length, o + 0xffff));
      const len = chunk.length;
      out.push(new Uint8Array([0x00, len & 0xff, len >> 8, ~len & 0xff, (~len >> 8) & 0xff]), chunk);
      if (block.length === 0) break;
    }
    out.push(new Uint8Array([0x00, 0x00, 0x00, 0xff, 0xff]));
    let n = 0;
    for (const p of out) n += p.length;
    const r = new Uint8Array(n);
    let at = 0;
    for (const p of out) {
      r.set(p, at);
      at += p.length;
    }
    return r;
  }
}

/** The client's direction: one inflate context for the connection, primed with the dictionary. */
export class HeaderDecompressor {
  private writer?: WritableStreamDefaultWriter<Uint8Array>;
  private reader?: ReadableStreamDefaultReader<Uint8Array>;
  private pending = new Uint8Array(0);
  private skip = SPDY_DICTIONARY.length;

  async decompress(compressed: Uint8Array): Promise<Map<string, string>> {
    let input = compressed;
    if (!this.writer) {
      const ds = new DecompressionStream('deflate-raw');
      this.writer = ds.writable.getWriter() as WritableStreamDefaultWriter<Uint8Array>;
      this.reader = ds.readable.getReader() as ReadableStreamDefaultReader<Uint8Array>;
      // zlib header: CMF FLG [DICTID]; the dictionary goes in first as a stored block
      const fdict = (input[1]! & 0x20) !== 0;
      input = input.subarray(fdict ? 6 : 2);
      const d = SPDY_DICTIONARY;
      const stored = new Uint8Array(5 + d.length);
      stored.set([0x00, d.length & 0xff, d.length >> 8, ~d.length & 0xff, (~d.length >> 8) & 0xff]);
      stored.set(d, 5);
      if (!fdict) this.skip = 0;
      else this.writer.write(stored).catch(() => {});
    }
    this.writer.write(input).catch(() => {});
    for (;;) {
      const parsed = parseHeaderBlock(this.pending);
      if (parsed) {
        this.pending = this.pending.slice(parsed.size);
        return parsed.headers;
      }
      const r = await this.reader!.read();
      if (r.done) throw new Error('spdy: header stream ended');
      let v = r.value;
      if (this.skip > 0) {
        const s = Math.min(this.skip, v.length);
        v = v.subarray(s);
        this.skip -= s;
      }
      const next = new Uint8Array(this.pending.length + v.length);
      next.set(this.pending);
      next.set(v, this.pending.length);
      this.pending = next;
    }
  }

  close(): void {
    this.writer?.abort().catch(() => {});
    this.reader?.cancel().catch(() => {});
  }
}

export interface SpdyStreamEvents {
  /** a client stream opened (SYN_REPLY already sent) */
  onStream(id: number, headers: Map<string, string>): void;
  onData(id: number, data: Uint8Array): void;
  /** the client half-closed the stream (FIN) */
  onFin(id: number): void;
  onReset(id: number): void;
  /** the connection ended (GOAWAY, transport closed, protocol error) */
  onClose(): void;
}

const MAX_DATA = 32 * 1024;

/** A SPDY/3.1 server connection over a byte transport. */
export class SpdyServer {
  private readonly reader = new FrameReader();
  private readonly compressor = new HeaderCompressor();
  private readonly decompressor = new HeaderDecompressor();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly write: (bytes: Uint8Array) => void,
    private readonly endTransport: () => void,
    private readonly events: SpdyStreamEvents,
  ) {}

  /** Bytes from the client. Frames are handled strictly in order (header blocks decode asynchronously). */
  receive(chunk: Uint8Array): void {
    if (this.closed) return;
    for (const f of this.reader.push(chunk)) {
      this.queue = this.queue.then(() => this.handle(f)).catch(() => this.close());
    }
  }

  private async handle(f: SpdyFrame): Promise<void> {
    if (this.closed) return;
    if (!f.control) {
      if (f.data.length) this.events.onData(f.streamId, f.data);
      if (f.flags & FLAG_FIN) this.events.onFin(f.streamId);
      return;
    }
    switch (f.type) {
      case TYPE_SYN_STREAM: {
        const id = u32(f.data, 0) & 0x7fffffff;
        const headers = await this.decompressor.decompress(f.data.subarray(10));
        this.send(controlFrame(TYPE_SYN_REPLY, 0, this.replyPayload(id)));
        this.events.onStream(id, headers);
        if (f.flags & FLAG_FIN) this.events.onFin(id);
        return;
      }
      case TYPE_HEADERS:
        // keeps the decompression context in step; nothing in it matters here
        await this.decompressor.decompress(f.data.subarray(4));
        return;
      case TYPE_RST_STREAM:
        this.events.onReset(u32(f.data, 0) & 0x7fffffff);
        return;
      case TYPE_PING:
        this.send(controlFrame(TYPE_PING, 0, f.data));
        return;
      case TYPE_GOAWAY:
        this.close();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, CREDENTIAL: spdystream does no flow control either
        return;
    }
  }

  private replyPayload(id: number): Uint8Array {
    const block = this.compressor.compress(encodeHeaderBlock([]));
    const p = new Uint8Array(4 + block.length);
    putU32(p, 0, id);
    p.set(block, 4);
    return p;
  }

  private send(bytes: Uint8Array): void {
    if (!this.closed) this.write(bytes);
  }

  sendData(id: number, data: Uint8Array): void {
    for (let o = 0; o < data.length; o += MAX_DATA)
      this.send(dataFrame(id, 0, data.subarray(o, o + MAX_DATA)));
  }

  /** half-close our side of a stream */
  sendFin(id: number): void {
    this.send(dataFrame(id, FLAG_FIN, new Uint8Array(0)));
  }

  reset(id: number, status = RST_CANCEL): void {
    const p = new Uint8Array(8);
    putU32(p, 0, id);
    putU32(p, 4, status);
    this.send(controlFrame(TYPE_RST_STREAM, 0, p));
  }

  /** the transport went away */
  transportClosed(): void {
    this.close(false);
  }

  close(endTransport = true): void {
    if (this.closed) return;
    this.closed = true;
    this.decompressor.close();
    this.events.onClose();
    if (endTransport) this.endTransport();
  }
}
