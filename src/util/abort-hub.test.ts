import { describe, expect, it } from 'vitest';
import { hearAbort, unhearAbort } from './abort-hub.ts';

describe('abort hub', () => {
  it('runs every callback once on the abort, through one listener', () => {
    const ac = new AbortController();
    let added = 0;
    const add = ac.signal.addEventListener.bind(ac.signal);
    ac.signal.addEventListener = ((...a: Parameters<typeof add>) => {
      added++;
      add(...a);
    }) as typeof add;
    const ran: number[] = [];
    for (let i = 0; i < 50; i++) hearAbort(ac.signal, () => ran.push(i));
    expect(added).toBe(1);
    ac.abort();
    ac.signal.dispatchEvent(new Event('abort'));
    expect(ran).toEqual([...Array(50).keys()]);
  });

  it('does not run a callback taken back, nor one taken back by an earlier callback', () => {
    const ac = new AbortController();
    const ran: string[] = [];
    const b = () => ran.push('b');
    const c = () => ran.push('c');
    hearAbort(ac.signal, () => {
      ran.push('a');
      unhearAbort(ac.signal, c);
    });
    hearAbort(ac.signal, b);
    hearAbort(ac.signal, c);
    unhearAbort(ac.signal, b);
    ac.abort();
    expect(ran).toEqual(['a']);
  });

  it('never runs a callback added after the abort (as addEventListener)', () => {
    const ac = new AbortController();
    const ran: string[] = [];
    hearAbort(ac.signal, () => ran.push('before'));
    ac.abort();
    hearAbort(ac.signal, () => ran.push('after'));
    expect(ran).toEqual(['before']);
  });

  it('keeps the signals apart', () => {
    const a = new AbortController();
    const b = new AbortController();
    const ran: string[] = [];
    hearAbort(a.signal, () => ran.push('a'));
    hearAbort(b.signal, () => ran.push('b'));
    b.abort();
    expect(ran).toEqual(['b']);
    a.abort();
    expect(ran).toEqual(['b', 'a']);
  });

  it('takes its listener off once the last callback is taken back, and puts it back for the next', () => {
    const ac = new AbortController();
    const on = new Set<unknown>();
    const add = ac.signal.addEventListener.bind(ac.signal);
    const remove = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.addEventListener = ((type: string, fn: unknown, o?: unknown) => {
      on.add(fn);
      add(type, fn as EventListener, o as AddEventListenerOptions);
    }) as typeof add;
    ac.signal.removeEventListener = ((type: string, fn: unknown) => {
      on.delete(fn);
      remove(type, fn as EventListener);
    }) as typeof remove;
    const ran: string[] = [];
    const a = () => ran.push('a');
    const b = () => ran.push('b');
    hearAbort(ac.signal, a);
    hearAbort(ac.signal, b);
    unhearAbort(ac.signal, a);
    expect(on.size).toBe(1);
    unhearAbort(ac.signal, a);
    expect(on.size).toBe(1);
    unhearAbort(ac.signal, b);
    // a derived signal (AbortSignal.any) with an abort listener is held by Node until it aborts
    expect(on.size).toBe(0);
    const c = () => ran.push('c');
    hearAbort(ac.signal, c);
    expect(on.size).toBe(1);
    ac.abort();
    expect(ran).toEqual(['c']);
  });

  it('a callback taking back the last other one does not stop the abort', () => {
    const ac = new AbortController();
    const ran: string[] = [];
    const b = () => ran.push('b');
    hearAbort(ac.signal, () => {
      ran.push('a');
      unhearAbort(ac.signal, b);
    });
    hearAbort(ac.signal, b);
    ac.abort();
    expect(ran).toEqual(['a']);
    hearAbort(ac.signal, () => ran.push('late'));
    expect(ran).toEqual(['a']);
  });
});
