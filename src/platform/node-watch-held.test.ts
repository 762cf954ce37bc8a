import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { type ChunkSink, readChunks } from '../util/chunks.ts';
import { installNodeHooks, UndiciTransport } from './node.ts';

// A watch's answer read only after its chunks came (a merged watch starts reading once its head is out):
// the first held chunk is handed on at once, the rest in the next task, every byte in order, then the end.
const EVENTS = 200;
const line = (i: number) =>
  `{"type":"ADDED","object":{"metadata":{"name":"cm-${i}","resourceVersion":"${i}"}}}\n`;
const ALL = Array.from({ length: EVENTS }, (_, i) => line(i)).join('');

let server: Server;
let ep: ResolvedEndpoint;
const transport = new UndiciTransport(undefined);

beforeAll(async () => {
  installNodeHooks();
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // one write per event: many chunks held before anyone reads
    for (let i = 0; i < EVENTS; i++) res.write(line(i));
    if (req.url?.includes('end=1')) res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const s = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ep = { name: 'c1', server: s, poolKey: s, timeoutMs: 10_000 } as ResolvedEndpoint;
});

afterAll(async () => {
  await transport.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const watch = (q: string, signal: AbortSignal) =>
  transport.send(ep, {
    method: 'GET',
    url: `${ep.server}/api/v1/configmaps?watch=true${q}`,
    headers: new Headers(),
    body: null,
    timeoutMs: 10_000,
    signal,
  });

/** what the sink took synchronously inside readChunks, and everything until `until` */
async function readHeld(res: Response, until: (s: string, ended: boolean) => boolean) {
  const dec = new TextDecoder();
  let got = '';
  let ended = false;
  let failed: unknown;
  const sink: ChunkSink = {
    chunk: (c) => {
      got += dec.decode(c, { stream: true });
    },
    end: () => {
      ended = true;
    },
    fail: (e) => {
      failed = e;
    },
  };
  const reading = readChunks(res.body!, sink);
  const atOnce = got;
  // the rest is handed on in the next task, all of it (not a chunk a task: a replay would crawl)
  await new Promise((r) => setTimeout(r, 0));
  await new Promise((r) => setTimeout(r, 0));
  const nextTask = got;
  const t0 = Date.now();
  while (!until(got, ended) && !failed && Date.now() - t0 < 20_000)
    await new Promise((r) => setTimeout(r, 5));
  return { atOnce, nextTask, got, ended, failed, reading };
}

/** waits until the server's writes have been read into the answer (nobody reading it yet) */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 10));
}

describe('a watch answer read after its chunks came (node-watch.ts WatchAnswer.read)', () => {
  it('hands on the first held chunk at once, the rest in the next task, all in order', async () => {
    const ac = new AbortController();
    const res = await watch('', ac.signal);
    await settle();
    const r = await readHeld(res, (s) => s.length >= ALL.length);
    ac.abort();
    r.reading.cancel();
    expect(r.failed).toBeUndefined();
    expect(r.got).toBe(ALL);
    expect(r.atOnce.length).toBeGreaterThan(0);
    // not everything in the same task: the merged watch's first event can go out before the rest is merged
    expect(r.atOnce.length).toBeLessThan(ALL.length);
    expect(ALL.startsWith(r.atOnce)).toBe(true);
    expect(r.nextTask).toBe(ALL);
  });

  it('an answer that ended before it was read ends after its last byte', async () => {
    const ac = new AbortController();
    const res = await watch('&end=1', ac.signal);
    await settle();
    const r = await readHeld(res, (_, ended) => ended);
    expect(r.failed).toBeUndefined();
    expect(r.ended).toBe(true);
    expect(r.got).toBe(ALL);
  });

  it('cancelled before the rest was handed on: it ends, and nothing more comes', async () => {
    const ac = new AbortController();
    const res = await watch('', ac.signal);
    await settle();
    const dec = new TextDecoder();
    let got = '';
    let ended = 0;
    const reading = readChunks(res.body!, {
      chunk: (c) => {
        got += dec.decode(c, { stream: true });
      },
      end: () => {
        ended++;
      },
      fail: () => {},
    });
    const atOnce = got;
    reading.cancel();
    await settle();
    expect(ended).toBe(1);
    expect(got).toBe(atOnce);
  });
});
