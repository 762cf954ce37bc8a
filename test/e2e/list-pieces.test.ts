/**
 * A merged list's pieces written by the Node server straight from the merge's generator (src/util/pieces.ts,
 * deploy/node/http.ts): every byte in order, a failure mid-body still a broken transfer (never a clean end
 * of a truncated list), and a client that leaves closes the generator (the upstream bodies it reads).
 */
import { get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type ServedHandle, serveFetch } from '../../deploy/node/http.ts';
import { piecesBody } from '../../src/util/pieces.ts';

let served: ServedHandle | undefined;
afterEach(async () => {
  await served?.close(100);
  served = undefined;
});

/** `n` pieces of `size` bytes, piece k filled with the letter k mod 26, then `fail` (if any) */
async function* pieces(n: number, size: number, log: string[], fail?: Error): AsyncGenerator<Uint8Array> {
  try {
    for (let k = 0; k < n; k++) yield new Uint8Array(size).fill(0x61 + (k % 26));
    if (fail) throw fail;
  } finally {
    log.push('closed');
  }
}

function fetchRaw(url: string): Promise<{ bytes: Buffer; complete: boolean }> {
  return new Promise((res, rej) => {
    get(url, (r) => {
      const parts: Buffer[] = [];
      r.on('data', (d: Buffer) => parts.push(d));
      r.on('end', () => res({ bytes: Buffer.concat(parts), complete: r.complete }));
      r.on('error', () => res({ bytes: Buffer.concat(parts), complete: false }));
    }).on('error', rej);
  });
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}

describe('merged list pieces on the Node server', () => {
  it('are written from the generator, in order, the Web body never read', async () => {
    const log: string[] = [];
    let body: ReadableStream<Uint8Array> | undefined;
    served = await serveFetch(() => {
      body = piecesBody(pieces(40, 256 * 1024, log), () => log.push('failed'));
      return new Response(body, { headers: { 'Content-Type': 'application/json' } });
    });
    const { bytes, complete } = await fetchRaw(`${served.url}/api/v1/pods`);
    expect(complete).toBe(true);
    expect(bytes.length).toBe(40 * 256 * 1024);
    for (let k = 0; k < 40; k++) expect(bytes[k * 256 * 1024 + 1234]).toBe(0x61 + (k % 26));
    expect(body!.locked).toBe(false);
    expect(log).toEqual(['closed']);
  });

  it('a failure mid-body ends as a broken transfer, told once', async () => {
    const log: string[] = [];
    served = await serveFetch(
      () =>
        new Response(
          piecesBody(pieces(3, 64 * 1024, log, new Error('member cut')), () => log.push('failed')),
          { headers: { 'Content-Type': 'application/json' } },
        ),
    );
    const { bytes, complete } = await fetchRaw(`${served.url}/api/v1/pods`);
    expect(complete).toBe(false);
    expect(bytes.length).toBeLessThanOrEqual(3 * 64 * 1024);
    await until(() => log.includes('closed'));
    expect(log.filter((l) => l === 'failed')).toHaveLength(1);
  });

  it('a client that leaves mid-answer closes the generator', async () => {
    const log: string[] = [];
    served = await serveFetch(
      () =>
        new Response(
          piecesBody(pieces(100_000, 256 * 1024, log), () => log.push('failed')),
          {
            headers: { 'Content-Type': 'application/json' },
          },
        ),
    );
    await new Promise<void>((res, rej) => {
      const req = get(`${served!.url}/api/v1/pods`, (r) => {
        let got = 0;
        r.on('data', (d: Buffer) => {
          got += d.length;
          if (got > 1024 * 1024) {
            req.destroy();
            res();
          }
        });
      });
      req.on('error', () => {});
      req.on('close', () => res());
      setTimeout(() => rej(new Error('no bytes came')), 30_000).unref();
    });
    await until(() => log.includes('closed'));
    expect(log).toEqual(['closed']);
  });
});
