import { describe, expect, it } from 'vitest';
import { piecesBody, takePieces } from './pieces.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

async function* threePieces(log: string[]): AsyncGenerator<Uint8Array> {
  try {
    for (const p of ['{"items":[', '1,2', ']}']) {
      log.push(`made ${p}`);
      yield enc.encode(p);
    }
  } finally {
    log.push('closed');
  }
}

describe('piecesBody', () => {
  it('reads as a Web body, piece after piece, nothing made before the first read', async () => {
    const log: string[] = [];
    const body = piecesBody(threePieces(log), () => log.push('failed'));
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual([]);
    expect(dec.decode(await new Response(body).arrayBuffer())).toBe('{"items":[1,2]}');
    expect(log).toEqual(['made {"items":[', 'made 1,2', 'made ]}', 'closed']);
    // read as a Web body: its generator is nobody else's now
    expect(takePieces(body)).toBeUndefined();
  });

  it('hands its generator over once to a writer that takes it before any read', async () => {
    const log: string[] = [];
    const body = piecesBody(threePieces(log), () => {});
    const p = takePieces(body)!;
    expect(p).toBeDefined();
    expect(takePieces(body)).toBeUndefined();
    let text = '';
    for await (const piece of p.pieces) text += dec.decode(piece);
    expect(text).toBe('{"items":[1,2]}');
    expect(log.at(-1)).toBe('closed');
  });

  it('a locked body is not handed over', () => {
    const body = piecesBody(threePieces([]), () => {});
    body.getReader();
    expect(takePieces(body)).toBeUndefined();
  });

  it('a failure mid-body is told once and errors the Web body', async () => {
    const told: unknown[] = [];
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield enc.encode('{"items":[');
      throw new Error('member cut');
    }
    const reader = piecesBody(failing(), (err) => told.push(err)).getReader();
    expect(dec.decode((await reader.read()).value)).toBe('{"items":[');
    await expect(reader.read()).rejects.toThrow('member cut');
    expect(told).toHaveLength(1);
  });

  it('a cancelled body closes its generator', async () => {
    const log: string[] = [];
    const body = piecesBody(threePieces(log), () => {});
    const reader = body.getReader();
    await reader.read();
    await reader.cancel();
    expect(log).toEqual(['made {"items":[', 'closed']);
  });
});
