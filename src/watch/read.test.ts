import { describe, expect, it } from 'vitest';
import type { WatchEvent } from './merge.ts';
import { readWatchEvents } from './read.ts';

const enc = new TextEncoder();

/** a body that hands one chunk per read, then ends or breaks (an open upstream, not one already over) */
function body(chunks: Array<string | Uint8Array>, end: 'close' | 'error' = 'close') {
  let cancelled = false;
  let at = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        if (at < chunks.length) {
          const x = chunks[at++]!;
          c.enqueue(typeof x === 'string' ? enc.encode(x) : x);
        } else if (end === 'close') c.close();
        else c.error(new TypeError('terminated'));
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, cancelled: () => cancelled };
}

const line = (n: number, type = 'ADDED') => JSON.stringify({ type, object: { n } });

async function read(chunks: Array<string | Uint8Array>, end: 'close' | 'error' = 'close', stopAt?: number) {
  const b = body(chunks, end);
  const events: WatchEvent[] = [];
  let error: unknown;
  try {
    await readWatchEvents(b.stream, (ev) => {
      events.push(ev);
      return ev.object.n !== stopAt;
    });
  } catch (e) {
    error = e;
  }
  return { events: events.map((e) => e.object.n), error, cancelled: b.cancelled() };
}

describe('readWatchEvents', () => {
  it('reads events split anywhere across chunks (mid-character too), blank lines skipped, a last line without newline', async () => {
    const all = `${line(1)}\n\n${line(2)}\r\n${JSON.stringify({ type: 'ADDED', object: { n: 3, s: 'é€𝄞' } })}`;
    const bytes = enc.encode(all);
    // cut at every byte offset: the splitter joins on 0x0a, never inside a UTF-8 character
    for (let cut = 1; cut < bytes.length; cut++) {
      const r = await read([bytes.slice(0, cut), bytes.slice(cut)]);
      expect(r.error).toBeUndefined();
      expect(r.events).toEqual([1, 2, 3]);
    }
  });

  it('hands over every good event before a line that is not a watch event, then rejects', async () => {
    for (const bad of ['<html>oops</html>\n', '42\n', '{"type":"ADDED"}\n']) {
      const r = await read([`${line(1)}\n${bad}${line(2)}\n`]);
      expect(r.events).toEqual([1]);
      expect(r.error).toBeInstanceOf(Error);
    }
  });

  it('rejects when the body breaks, after the events that came', async () => {
    const r = await read([`${line(1)}\n${line(2)}\n`], 'error');
    expect(r.events).toEqual([1, 2]);
    expect(r.error).toBeInstanceOf(TypeError);
  });

  it('stops at the event the callback refuses, cancelling the body: nothing after it is handed over', async () => {
    const r = await read([`${line(1)}\n${line(2, 'ERROR')}\n${line(3)}\n`], 'close', 2);
    expect(r.events).toEqual([1, 2]);
    expect(r.error).toBeUndefined();
    expect(r.cancelled).toBe(true);
  });
});
