/**
 * startInTurn (./start.ts): each answered source is set going in a task of its own after the head, and
 * that task is the next one, not the timers' turn (setTimeout(0) held every merged watch's first event
 * for 1 ms and more, issue 33's first-event row on the real bed).
 */
import { readFile } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Source } from './sources.ts';
import { type Start, type StartHandlers, startInTurn } from './start.ts';

const source = (label: string): Source => ({ label, clusters: [label] }) as unknown as Source;

function recording(order: string[]): StartHandlers {
  return {
    sendInitialEvents: false,
    upgradesLegacy: false,
    emit: () => {},
    hold: (src) => order.push(src.label),
  };
}

/** runs `f` inside an I/O callback, as the route decides the head after an upstream's answer was read */
const inIO = (f: () => void) => new Promise<void>((done) => readFile(import.meta.filename, () => done(f())));

describe('startInTurn', () => {
  it('sets the sources going, in order, before a timer of 0 ms set just before them fires', async () => {
    const order: string[] = [];
    let fired!: () => void;
    const timer = new Promise<void>((r) => {
      fired = r;
    });
    await inIO(() => {
      setTimeout(() => {
        order.push('timer');
        fired();
      }, 0);
      const starts: Start[] = ['a', 'b', 'c'].map((l) => ({ src: source(l), res: new Response('') }));
      startInTurn(starts, recording(order), () => false);
      // each in a task of its own: nothing yet
      expect(order).toEqual([]);
    });
    await timer;
    expect(order).toEqual(['a', 'b', 'c', 'timer']);
  });

  it('a stream closed before a source’s turn lets its answer go instead', async () => {
    const order: string[] = [];
    const body = new ReadableStream({ start: (c) => c.enqueue(new Uint8Array(1)) });
    const res = new Response(body);
    let closed = false;
    await inIO(() => {
      startInTurn([{ src: source('a'), res }], recording(order), () => closed);
      closed = true;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    // cancelled: its reader sees it done
    await expect(body.getReader().closed).resolves.toBeUndefined();
  });
});
