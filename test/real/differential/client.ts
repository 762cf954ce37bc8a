/**
 * One way to talk to both sides of the differential check: a simulated member served over plain HTTP and a
 * real member over TLS with its admin certificate. The same headers and body go to both; answers come back
 * as bytes, and watches as the events read until a condition holds.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface Target {
  name: 'sim' | 'real';
  url: string;
  tls?: { ca: string; cert: string; key: string };
}

export interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Answer {
  status: number;
  contentType: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const agents = new Map<string, HttpAgent>();

function open(t: Target, s: Sent, timeoutMs: number): Promise<IncomingMessage> {
  const url = new URL(s.path, t.url);
  let agent = agents.get(t.url);
  if (!agent) {
    agent = t.tls ? new HttpsAgent({ keepAlive: true, ...t.tls }) : new HttpAgent({ keepAlive: true });
    agents.set(t.url, agent);
  }
  const send = t.tls ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: s.method,
      agent,
      headers: {
        ...(s.body !== undefined ? { 'content-length': String(Buffer.byteLength(s.body)) } : {}),
        ...s.headers,
      },
      timeout: timeoutMs,
    });
    req.on('response', resolve);
    req.on('timeout', () => req.destroy(new Error(`${t.name} ${s.method} ${s.path}: timed out`)));
    req.on('error', reject);
    req.end(s.body);
  });
}

export async function send(t: Target, s: Sent, timeoutMs = 30_000): Promise<Answer> {
  const res = await open(t, s, timeoutMs);
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return {
    status: res.statusCode ?? 0,
    contentType: String(res.headers['content-type'] ?? ''),
    headers: res.headers,
    body: Buffer.concat(chunks),
  };
}

export interface WatchEvent {
  type: string;
  object: Record<string, unknown>;
}

export interface OpenedWatch {
  status: number;
  contentType: string;
  /** the events read so far (JSON watch streams only) */
  events: WatchEvent[];
  /** resolves once `pred` holds for the events read, or with false after `timeoutMs` or the stream's end */
  until(pred: (events: WatchEvent[]) => boolean, timeoutMs: number): Promise<boolean>;
  /** the body of a non-200 answer */
  body(): Buffer;
  close(): void;
}

/** Opens a JSON watch and reads its newline-separated events in the background. */
export async function watch(t: Target, s: Sent): Promise<OpenedWatch> {
  const res = await open(t, s, 120_000);
  const events: WatchEvent[] = [];
  const raw: Buffer[] = [];
  let ended = false;
  let buf = '';
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  res.on('data', (c: Buffer) => {
    raw.push(c);
    if (res.statusCode !== 200) return;
    buf += c.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line) events.push(JSON.parse(line) as WatchEvent);
    }
    wake();
  });
  res.on('end', () => {
    ended = true;
    wake();
  });
  res.on('error', () => {
    ended = true;
    wake();
  });
  return {
    status: res.statusCode ?? 0,
    contentType: String(res.headers['content-type'] ?? ''),
    events,
    body: () => Buffer.concat(raw),
    until(pred, timeoutMs) {
      return new Promise((resolve) => {
        const check = () => {
          if (pred(events)) return done(true);
          if (ended) return done(false);
        };
        const timer = setTimeout(() => done(false), timeoutMs);
        const done = (v: boolean) => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(v);
        };
        waiters.add(check);
        check();
      });
    },
    close() {
      res.destroy();
    },
  };
}

export function closeAgents(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}
