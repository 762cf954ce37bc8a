import { describe, expect, it } from 'vitest';
import type { FleetDeps } from '../../types.ts';
import type { fanOut } from '../fanout.ts';
import { relayGroup } from '../relay.ts';
import { handleRelay } from './serve.ts';

const enc = new TextEncoder();

/** a list answer in 4 KiB chunks (as workerd reads them), breaking after `breakAfter` chunks when given */
function listBody(
  items: number,
  breakAfter?: number,
): { bytes: Uint8Array; body: ReadableStream<Uint8Array> } {
  const list = {
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '7' },
    items: [] as unknown[],
  };
  for (let k = 0; k < items; k++) list.items.push({ metadata: { name: `p${k}`, namespace: 'default' } });
  const bytes = enc.encode(JSON.stringify(list));
  let at = 0;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (breakAfter !== undefined && sent === breakAfter) return c.error(new Error('connection reset'));
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + 4096));
      at += 4096;
      sent++;
    },
  });
  return { bytes, body };
}

/** the relay served from this process: one group of clusters whose answers `answers` gives */
function relayOf(answers: Record<string, ReadableStream<Uint8Array>>) {
  const deps = {
    membership: {
      members: async () =>
        Object.keys(answers).map((name) => ({ name, endpoint: { server: `https://${name}` } })),
      controlPlane: { server: 'https://karmada' },
    },
  } as unknown as FleetDeps;
  const fake = (async (_d, targets) =>
    targets.map((target) => ({
      target,
      ok: true,
      res: new Response(answers[target.cluster], { headers: { 'content-type': 'application/json' } }),
    }))) as typeof fanOut;
  return (req: Request) => handleRelay(deps, req, fake);
}

async function readAll(res: Response): Promise<{ bytes: Uint8Array; error?: string }> {
  const reader = res.body!.getReader();
  const parts: number[] = [];
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(...r.value);
  } catch (e) {
    return { bytes: Uint8Array.from(parts), error: String(e) };
  }
  return { bytes: Uint8Array.from(parts) };
}

describe('the relay in list order', () => {
  it('carries each list byte for byte, in frames larger than the reads', async () => {
    const a = listBody(3000);
    const b = listBody(10);
    const got = await relayGroup(
      relayOf({ a: a.body, b: b.body }),
      ['a', 'b'],
      [
        { method: 'GET', path: '/api/v1/pods' },
        { method: 'GET', path: '/api/v1/pods' },
      ],
      undefined,
      'list',
      undefined,
    );
    const [ra, rb] = got.map((o) => (o.ok ? o.res : undefined));
    expect(ra?.status).toBe(200);
    expect(rb?.headers.get('content-type')).toBe('application/json');
    const [ba, bb] = await Promise.all([readAll(ra!), readAll(rb!)]);
    expect(ba.error).toBeUndefined();
    expect(Buffer.from(ba.bytes).equals(a.bytes)).toBe(true);
    expect(Buffer.from(bb.bytes).equals(b.bytes)).toBe(true);
  });

  it('passes on the bytes read before a body breaks, then the break', async () => {
    const a = listBody(3000, 5);
    const [o] = await relayGroup(
      relayOf({ a: a.body }),
      ['a'],
      [{ method: 'GET', path: '/api/v1/pods' }],
      undefined,
      'list',
      undefined,
    );
    expect(o?.ok).toBe(true);
    const got = await readAll((o as { res: Response }).res);
    expect(got.error).toMatch(/connection reset/);
    expect(got.bytes.length).toBe(5 * 4096);
    expect(Buffer.from(got.bytes).equals(a.bytes.subarray(0, 5 * 4096))).toBe(true);
  });
});
