/**
 * A watch whose answer is a plain Web stream (a simulated cluster's, or any handler's) on the Node server
 * (deploy/node/http.ts): at the end of a drain it ends cleanly when its last event is whole, and is cut
 * when an event is half written, so a client never reads a clean end after half an event.
 */
import { get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServedHandle, serveFetch } from '../../deploy/node/http.ts';

let served: ServedHandle | undefined;
afterEach(async () => {
  await served?.close(0);
  served = undefined;
});

const enc = new TextEncoder();

/** a watch served from a Web stream whose controller the test writes into */
async function serveWatch(): Promise<{ push: (s: string) => void; opened: Promise<void> }> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let opened!: () => void;
  const open = new Promise<void>((r) => {
    opened = r;
  });
  served = await serveFetch(() => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
        opened();
      },
    });
    return new Response(body, { headers: { 'Content-Type': 'application/json' } });
  });
  return { push: (s) => controller.enqueue(enc.encode(s)), opened: open };
}

/** reads the watch until it ends; `got` says what came so far */
function read(url: string) {
  let text = '';
  const ended = new Promise<{ text: string; complete: boolean }>((res, rej) => {
    get(url, (r) => {
      r.setEncoding('utf8');
      r.on('data', (d: string) => {
        text += d;
      });
      r.on('end', () => res({ text, complete: r.complete }));
      r.on('error', () => res({ text, complete: false }));
      r.on('aborted', () => res({ text, complete: false }));
    }).on('error', rej);
  });
  return { ended, got: () => text };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}

const EVENT = '{"type":"ADDED","object":{"kind":"Pod"}}\n';

describe('a Web-stream watch on the Node server at the end of a drain', () => {
  it('ends cleanly after a whole event', async () => {
    const w = await serveWatch();
    const r = read(`${served!.url}/api/v1/pods?watch=true`);
    await w.opened;
    w.push(EVENT);
    w.push(EVENT);
    await until(() => r.got() === EVENT + EVENT);
    void served!.close(0);
    expect(await r.ended).toEqual({ text: EVENT + EVENT, complete: true });
  });

  it('is cut when an event is half written', async () => {
    const w = await serveWatch();
    const r = read(`${served!.url}/api/v1/pods?watch=true`);
    await w.opened;
    w.push(EVENT);
    w.push('{"type":"ADDED",');
    await until(() => r.got() === `${EVENT}{"type":"ADDED",`);
    void served!.close(0);
    expect(await r.ended).toEqual({ text: `${EVENT}{"type":"ADDED",`, complete: false });
  });
});
