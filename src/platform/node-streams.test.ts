import { describe, expect, it, vi } from 'vitest';
import { attachDirect, directPushBodies, unexplainedRefusal } from './node-streams.ts';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (c: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(c));

function fakeOut() {
  const written: Uint8Array[] = [];
  return {
    written,
    ended: 0,
    writableLength: 0,
    write(c: Uint8Array) {
      written.push(c);
      this.writableLength += c.byteLength;
      return true;
    },
    end() {
      this.ended++;
    },
  };
}

describe('direct push bodies (a merged watch written into the Node response)', () => {
  it('writes what waited, then each chunk as it comes, and ends once', () => {
    let cancelled = 0;
    const { body, writer } = directPushBodies(() => cancelled++);
    expect(writer.push(bytes('a\n'))).toBe(2);
    const out = fakeOut();
    const seen: string[] = [];
    const h = attachDirect(body, out, { chunk: (c) => seen.push(text([c])) });
    expect(h).toBeDefined();
    expect(writer.push(bytes('b\n'))).toBe(4);
    writer.close();
    writer.close();
    h!.cancel();
    expect(text(out.written)).toBe('a\nb\n');
    expect(seen).toEqual(['a\n', 'b\n']);
    expect(out.ended).toBe(1);
    expect(cancelled).toBe(0);
    // attached once only
    expect(attachDirect(body, fakeOut())).toBeUndefined();
  });

  it('a body closed before the server attached it ends right after what waited', () => {
    const { body, writer } = directPushBodies(() => {});
    writer.push(bytes('x\n'));
    writer.close();
    const out = fakeOut();
    attachDirect(body, out);
    expect(text(out.written)).toBe('x\n');
    expect(out.ended).toBe(1);
  });

  it('the server going away first tells the writer once; later pushes are dropped', () => {
    let cancelled = 0;
    const { body, writer } = directPushBodies(() => cancelled++);
    const out = fakeOut();
    const h = attachDirect(body, out)!;
    h.cancel();
    h.cancel();
    writer.push(bytes('late\n'));
    expect(cancelled).toBe(1);
    expect(out.written).toEqual([]);
  });

  it('read as a Web body instead, it gives what waited and what follows, then ends', async () => {
    const { body, writer } = directPushBodies(() => {});
    writer.push(bytes('1\n'));
    const reader = body.getReader();
    const first = await reader.read();
    writer.push(bytes('2\n'));
    writer.close();
    const second = await reader.read();
    expect(text([first.value!, second.value!])).toBe('1\n2\n');
    expect((await reader.read()).done).toBe(true);
    expect(attachDirect(body, fakeOut())).toBeUndefined();
  });

  it('a Web reader cancelling tells the writer', async () => {
    let cancelled = 0;
    const { body } = directPushBodies(() => cancelled++);
    await body.cancel();
    expect(cancelled).toBe(1);
  });
});

describe('the framed writer refused (node:http answers it does not frame itself)', () => {
  const h11 = { httpVersionMajor: 1, httpVersionMinor: 1, method: 'GET' };
  const known = { chunkedEncoding: true, outputSize: 0, _hasBody: true };

  it('says nothing of what the protocol explains: HTTP/1.0, HEAD, HTTP/2, a bodyless or queued answer, a fake', () => {
    expect(unexplainedRefusal({ req: h11, ...known })).toBeUndefined();
    expect(
      unexplainedRefusal({ req: { ...h11, httpVersionMinor: 0 }, chunkedEncoding: false }),
    ).toBeUndefined();
    expect(unexplainedRefusal({ req: { ...h11, method: 'HEAD' } })).toBeUndefined();
    expect(
      unexplainedRefusal({ req: { httpVersionMajor: 2, httpVersionMinor: 0, method: 'GET' } }),
    ).toBeUndefined();
    expect(
      unexplainedRefusal({ req: h11, ...known, chunkedEncoding: false, _hasBody: false }),
    ).toBeUndefined();
    expect(unexplainedRefusal({ req: h11, ...known, outputSize: 120 })).toBeUndefined();
    expect(unexplainedRefusal({})).toBeUndefined();
  });

  it('names the field when node:http’s response no longer has it as known, and tells it once per process', () => {
    expect(unexplainedRefusal({ req: h11, outputSize: 0, _hasBody: true })).toMatch(
      /chunkedEncoding is undefined/,
    );
    expect(unexplainedRefusal({ req: h11, ...known, outputSize: undefined })).toMatch(
      /outputSize is undefined/,
    );
    expect(unexplainedRefusal({ req: h11, ...known, _hasBody: 1 })).toMatch(/_hasBody is number/);
    expect(unexplainedRefusal({ req: h11, ...known, chunkedEncoding: false })).toMatch(/not chunkedEncoding/);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      for (let k = 0; k < 2; k++) {
        const { body, writer } = directPushBodies(() => {});
        const out = { ...fakeOut(), req: h11, headersSent: true, outputSize: 0, _hasBody: true };
        expect(attachDirect(body, out)).toBeDefined();
        writer.push(bytes('x\n'));
        // written through the response all the same
        expect(text(out.written)).toBe('x\n');
      }
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![0]).toMatch(/through node:http's response.*chunkedEncoding is undefined/);
    } finally {
      warn.mockRestore();
    }
  });
});
