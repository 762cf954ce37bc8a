/**
 * A tiny upstream for tests of the transport itself: it answers every request with what it received
 * (method, path, headers, body), and serves `/stream` as a chunked body whose chunks the test releases
 * one at a time, to prove the fleet relays streams event by event.
 */
import { type ServedHandle, serveFetch } from '../../deploy/node/http.ts';

export interface EchoUpstream extends ServedHandle {
  received: Array<{ method: string; path: string; headers: Record<string, string>; body: string }>;
  /** enqueue one chunk into every open /stream response */
  push(chunk: string): void;
  endStreams(): void;
  openStreams(): number;
  down: boolean;
  delayMs: number;
}

export async function startEcho(): Promise<EchoUpstream> {
  const streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const enc = new TextEncoder();
  const state = { down: false, delayMs: 0 };
  const received: EchoUpstream['received'] = [];
  const handle = await serveFetch(
    async (req) => {
      const url = new URL(req.url);
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => {
        headers[k] = v;
      });
      const body = req.body ? await req.text() : '';
      received.push({ method: req.method, path: url.pathname + url.search, headers, body });
      if (state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
      if (url.pathname.endsWith('/stream')) {
        let ctl!: ReadableStreamDefaultController<Uint8Array>;
        const rs = new ReadableStream<Uint8Array>({
          start(c) {
            ctl = c;
            streams.add(c);
          },
          cancel() {
            streams.delete(ctl);
          },
        });
        return new Response(rs, { headers: { 'Content-Type': 'application/json' } });
      }
      return Response.json(
        { method: req.method, path: url.pathname + url.search, headers, body },
        { status: 200, headers: { 'X-Echo': 'yes', Connection: 'keep-alive', 'Keep-Alive': 'timeout=5' } },
      );
    },
    { admit: () => !state.down },
  );
  const echo = handle as EchoUpstream;
  echo.received = received;
  echo.push = (chunk: string) => {
    for (const c of streams) c.enqueue(enc.encode(chunk));
  };
  echo.endStreams = () => {
    for (const c of streams) c.close();
    streams.clear();
  };
  echo.openStreams = () => streams.size;
  Object.defineProperties(echo, {
    down: {
      get: () => state.down,
      set: (v: boolean) => {
        state.down = v;
      },
    },
    delayMs: {
      get: () => state.delayMs,
      set: (v: number) => {
        state.delayMs = v;
      },
    },
  });
  return echo;
}
