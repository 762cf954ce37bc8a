import { describe, expect, it } from 'vitest';
import { concatBytes } from '../../util/bytes.ts';
import { Demux, failureFrame, frame } from './protocol.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** the frames as a body cut into chunks of `size` bytes (frame heads and payloads split anywhere) */
function chunked(frames: Uint8Array[], size: number): ReadableStream<Uint8Array> {
  const all = concatBytes(frames);
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= all.length) return c.close();
      c.enqueue(all.slice(at, at + size));
      at += size;
    },
  });
}

describe('relay frames', () => {
  it('demultiplexes interleaved answers in order, whatever the chunking', async () => {
    for (const size of [1, 3, 7, 1024]) {
      const frames = [
        frame('H', 0, enc.encode('{"status":200}')),
        frame('H', 1, enc.encode('{"status":404}')),
        frame('B', 1, enc.encode('b1')),
        frame('B', 0, enc.encode('a1\n')),
        frame('E', 1),
        frame('B', 0, enc.encode('a2')),
        failureFrame(0, 'unreachable', 'cut'),
      ];
      const d = new Demux(chunked(frames, size), 2);
      const zero: string[] = [];
      const one: string[] = [];
      const read = async (i: number, into: string[]) => {
        for (let f = await d.next(i); f; f = await d.next(i)) into.push(`${f.kind}:${dec.decode(f.payload)}`);
      };
      await Promise.all([read(0, zero), read(1, one)]);
      expect(zero).toEqual(['H:{"status":200}', 'B:a1\n', 'B:a2', 'X:{"kind":"unreachable","detail":"cut"}']);
      expect(one).toEqual(['H:{"status":404}', 'B:b1', 'E:']);
    }
  });

  it('carries a payload given in parts, and frames larger than each read, byte for byte', async () => {
    const big = Uint8Array.from({ length: 200_000 }, (_, k) => (k * 7) % 251);
    const parts = [big.subarray(0, 4096), big.subarray(4096, 70_000), big.subarray(70_000)];
    const frames = [frame('H', 0, enc.encode('{}')), frame('B', 0, parts), frame('B', 0, big), frame('E', 0)];
    const d = new Demux(chunked(frames, 4096), 1);
    const got: string[] = [];
    for (let f = await d.next(0); f; f = await d.next(0)) {
      got.push(f.kind);
      if (f.kind === 'B')
        expect(f.payload.length === big.length && f.payload.every((b, k) => b === big[k])).toBe(true);
    }
    expect(got).toEqual(['H', 'B', 'B', 'E']);
  });

  it('refuses a body that is not frames', async () => {
    const d = new Demux(chunked([enc.encode('HTTP/1.1 200 OK\n')], 64), 1);
    await expect(d.next(0)).rejects.toThrow(/bad frame header/);
  });
});
