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
});
