import { describe, expect, it } from 'vitest';
import { acceptsGzip, GZIP_THRESHOLD, gzipIfLarge } from './respond.ts';

function body(size: number, chunk = 10_000): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= size) return c.close();
      const n = Math.min(chunk, size - sent);
      c.enqueue(new Uint8Array(n).fill(0x61));
      sent += n;
    },
  });
}

describe('gzipIfLarge', () => {
  it('leaves answers below the threshold alone, with a Content-Length', async () => {
    const r = await gzipIfLarge(body(GZIP_THRESHOLD - 1), 200, new Headers());
    expect(r.headers.get('content-encoding')).toBeNull();
    expect(r.headers.get('content-length')).toBe(String(GZIP_THRESHOLD - 1));
    expect((await r.arrayBuffer()).byteLength).toBe(GZIP_THRESHOLD - 1);
  });

  it('gzips answers from the threshold on, losslessly', async () => {
    const size = GZIP_THRESHOLD * 3 + 17;
    const r = await gzipIfLarge(body(size), 200, new Headers());
    expect(r.headers.get('content-encoding')).toBe('gzip');
    const gz = new Uint8Array(await r.arrayBuffer());
    expect(gz.length).toBeLessThan(size / 10);
    const plain = await new Response(
      new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip')),
    ).arrayBuffer();
    expect(plain.byteLength).toBe(size);
  });
});

describe('acceptsGzip', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['identity', false],
    ['gzip;q=0', false],
    ['*', true],
    [null, false],
    ['br;q=1, gzip;q=0.5', true],
  ])('%s → %s', (h, want) => {
    expect(acceptsGzip(h)).toBe(want);
  });
});
