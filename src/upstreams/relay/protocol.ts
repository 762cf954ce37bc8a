/**
 * The relay's wire format (see src/upstreams/relay.ts): the request one invocation sends another, and the
 * frames of the answer, `<kind><index> <length>\n<payload>` with kind H (status and headers, JSON), B (body
 * bytes), E (end of that body), X (failure, JSON {kind, detail}). The calling side (relay.ts)
 * and the serving side (serve.ts) both speak it.
 */

import type { UpstreamIdentity } from '../../auth/identity.ts';
import type { FleetDeps } from '../../types.ts';
import { concatBytes } from '../../util/bytes.ts';
import type { ResolvedEndpoint } from '../endpoint.ts';
import { type BulkReader, bulkReader } from './bulk.ts';

export type RelayMode = 'list' | 'stream' | 'watch';

export interface RelayRequest {
  mode: RelayMode;
  /** who the group's requests go as (the calling request's bound identity) */
  as?: UpstreamIdentity;
  requests: Array<{
    cluster: string;
    method: string;
    path: string;
    headers: Array<[string, string]>;
    body?: string;
  }>;
  /** `watch` mode: the clusters of the group, and which cluster a plain name means there */
  clusters?: string[];
  plainNameCluster?: string;
}

/** What a `watch` relay request runs: the fleet's merged watch over the given clusters (watch/route.ts). */
export type WatchRunner = (
  req: Request,
  deps: FleetDeps,
  targets: Array<{ cluster: string; endpoint: ResolvedEndpoint; controlPlane: boolean }>,
  plainNameCluster: string | undefined,
) => Promise<Response>;

const enc = new TextEncoder();
const dec = new TextDecoder();

/** statuses whose answers have no body */
export const NULL_BODY = new Set([101, 204, 205, 304]);

export type FrameKind = 'H' | 'B' | 'E' | 'X';

/** One frame; a payload given in parts is copied once, behind its head. */
export function frame(
  kind: FrameKind,
  index: number,
  payload: Uint8Array | readonly Uint8Array[] = new Uint8Array(0),
): Uint8Array {
  const parts = payload instanceof Uint8Array ? [payload] : payload;
  let size = 0;
  for (const p of parts) size += p.length;
  return concatBytes([enc.encode(`${kind}${index} ${size}\n`), ...parts]);
}

/** An X frame: why answer `index` failed. */
export function failureFrame(index: number, kind: string, detail: string): Uint8Array {
  return frame('X', index, enc.encode(JSON.stringify({ kind, detail })));
}

export interface Parsed {
  kind: string;
  index: number;
  payload: Uint8Array;
}

/** Splits the relay body into frames, on demand; frames for other answers wait in per-answer queues. */
export class Demux {
  private readonly reader: BulkReader;
  private buf: Uint8Array = new Uint8Array(0);
  /** chunks read behind `buf`, joined to it only once the frame at its front is whole (no copy per read) */
  private more: Uint8Array[] = [];
  private moreLength = 0;
  private ended = false;
  private pumping: Promise<void> | undefined;
  private readonly queues: Parsed[][];
  private readonly cancelled: boolean[];

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly n: number,
  ) {
    this.reader = bulkReader(body);
    this.queues = Array.from({ length: n }, () => []);
    this.cancelled = Array.from({ length: n }, () => false);
  }

  private parseOne(): Parsed | undefined {
    const nl = this.buf.indexOf(0x0a);
    if (nl < 0) return undefined;
    const line = dec.decode(this.buf.subarray(0, nl));
    const m = /^([HBEX])(\d+) (\d+)$/.exec(line);
    if (!m) throw new Error(`relay: bad frame header ${JSON.stringify(line.slice(0, 40))}`);
    const len = Number(m[3]);
    if (this.buf.length < nl + 1 + len) return undefined;
    const payload = this.buf.slice(nl + 1, nl + 1 + len);
    this.buf = this.buf.subarray(nl + 1 + len);
    return { kind: m[1]!, index: Number(m[2]), payload };
  }

  /** Parses one buffered frame into its queue; false when no whole frame is buffered. */
  private tryParse(): boolean {
    const f = this.parseOne();
    if (!f) return false;
    if (f.index < this.n && !this.cancelled[f.index]) this.queues[f.index]!.push(f);
    return true;
  }

  /** Reads until one more frame is parsed, or the stream ends. */
  private async pumpOnce(): Promise<void> {
    while (!this.tryParse()) {
      if (this.ended) return;
      // the rest of the frame at the front in one read where the runtime can (bulk.ts)
      const front = this.frontLength();
      const value = await this.reader.read(Math.max(1, front - this.buf.length - this.moreLength));
      if (!value) this.ended = true;
      else {
        this.more.push(value);
        this.moreLength += value.length;
      }
      // a frame's bytes arrive in many reads (workerd: 4 KiB each); joining them one read at a time
      // copied a 64 KiB frame eight times over
      if (this.ended || this.buf.length + this.moreLength >= front) {
        this.buf = concatBytes([this.buf, ...this.more]);
        this.more = [];
        this.moreLength = 0;
      }
    }
  }

  /** bytes the frame at the front of `buf` takes, head included (0 while its head is incomplete) */
  private frontLength(): number {
    const nl = this.buf.indexOf(0x0a);
    if (nl < 0) return 0;
    const sp = this.buf.lastIndexOf(0x20, nl);
    return nl + 1 + Number(dec.decode(this.buf.subarray(sp + 1, nl)));
  }

  /** The next frame for answer `i`, or undefined when the relay stream ended without one. */
  async next(i: number): Promise<Parsed | undefined> {
    for (;;) {
      const q = this.queues[i]!;
      if (q.length) return q.shift();
      if (this.ended) {
        if (!this.tryParse()) return undefined;
        continue;
      }
      // one read at a time: concurrent callers share the pump, then look at their queue again
      this.pumping ??= this.pumpOnce().finally(() => {
        this.pumping = undefined;
      });
      await this.pumping;
    }
  }

  async cancel(i: number): Promise<void> {
    this.cancelled[i] = true;
    this.queues[i]!.length = 0;
    if (this.cancelled.every(Boolean)) await this.reader.cancel().catch(() => {});
  }
}
