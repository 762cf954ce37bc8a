/**
 * What a client receives, read plainly: a watch's events as they arrive, a whole response over node:http
 * (so the test, not a client library, decides Accept-Encoding and sees a truncated body as truncated),
 * and a request over a raw socket (for paths a URL parser would normalise).
 */
import { Buffer } from 'node:buffer';
import http from 'node:http';
import net from 'node:net';
import { gunzipSync, constants as zc } from 'node:zlib';

export interface WatchEvent {
  type: string;
  object: {
    kind?: string;
    code?: number;
    metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
  };
}

export interface WatchReader {
  status: number;
  headers: Headers;
  events: WatchEvent[];
  /** lines that were not JSON */
  junk: string[];
  ended: boolean;
  error?: unknown;
  close(): void;
}

export async function openWatch(url: string, headers: Record<string, string> = {}): Promise<WatchReader> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'application/json', ...headers }, signal: ac.signal });
  const w: WatchReader = {
    status: res.status,
    headers: res.headers,
    events: [],
    junk: [],
    ended: false,
    close: () => ac.abort(),
  };
  void (async () => {
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += dec.decode(chunk, { stream: true });
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const line = buf.slice(0, i).trim();
          buf = buf.slice(i + 1);
          if (!line) continue;
          try {
            w.events.push(JSON.parse(line) as WatchEvent);
          } catch {
            w.junk.push(line);
          }
        }
      }
    } catch (e) {
      w.error = e;
    } finally {
      w.ended = true;
    }
  })();
  return w;
}

export interface Whole {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** the decoded body as far as it came */
  text: string;
  /** the body ended cleanly (not aborted, not short of its framing, gzip complete) */
  complete: boolean;
  ms: number;
}

/** one GET over node:http; a body that never ends is cut at `timeoutMs` and reported incomplete */
export function getWhole(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 40_000,
): Promise<Whole> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let settled = false;
    const done = (res: http.IncomingMessage | undefined, complete: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(tm);
      req.destroy();
      let raw = Buffer.concat(parts);
      if (res?.headers['content-encoding'] === 'gzip') {
        try {
          raw = gunzipSync(raw);
        } catch {
          complete = false;
          try {
            raw = gunzipSync(raw, { finishFlush: zc.Z_SYNC_FLUSH });
          } catch {
            raw = Buffer.alloc(0);
          }
        }
      }
      resolve({
        status: res?.statusCode ?? 0,
        headers: res?.headers ?? {},
        text: raw.toString(),
        complete,
        ms: Date.now() - t0,
      });
    };
    const req = http.get(url, { headers, agent: false }, (res) => {
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => done(res, res.complete));
      res.on('aborted', () => done(res, false));
      res.on('error', () => done(res, false));
      res.on('close', () => done(res, res.complete));
    });
    req.on('error', () => done(undefined, false));
    const tm = setTimeout(() => done(undefined, false), timeoutMs);
  });
}

/** the item names of a list body, or undefined when it is not a complete JSON list */
export function itemNames(text: string): string[] | undefined {
  try {
    const l = JSON.parse(text) as { items?: Array<{ metadata: { name: string } }> };
    return l.items?.map((i) => i.metadata.name).sort();
  } catch {
    return undefined;
  }
}

/** a request over a raw socket: the request target goes on the wire exactly as given */
export function rawRequest(
  port: number,
  head: string,
  opts: { body?: string; timeoutMs?: number } = {},
): Promise<{ status: number; text: string; ended: boolean }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    const parts: Buffer[] = [];
    let settled = false;
    const done = (ended: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(tm);
      s.destroy();
      const text = Buffer.concat(parts).toString();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, ended });
    };
    const tm = setTimeout(() => done(false), opts.timeoutMs ?? 10_000);
    s.on('data', (d) => {
      parts.push(d);
    });
    s.on('end', () => done(true));
    s.on('error', () => done(true));
    s.write(head);
    if (opts.body) s.write(opts.body);
  });
}
