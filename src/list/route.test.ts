import { describe, expect, it } from 'vitest';
import { decodeComposite } from '../merge/rv/index.ts';
import { type Cluster, fakeFleet, json, serve, status } from '../routes/testing.ts';
import { acceptsGzip, GZIP_THRESHOLD, gzipIfLarge, listRoute } from './route.ts';

const pod = (name: string, rv: string) => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
const podList = (rv: string, ...items: unknown[]) =>
  json({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: rv }, items });

async function list(clusters: Record<string, Cluster>, query = '', opts: { strict?: boolean } = {}) {
  const fleet = fakeFleet(clusters, opts);
  const res = await serve(
    (c, info) => listRoute(c, fleet.deps, info, fleet.targets, undefined),
    `http://fleet/api/v1/pods${query}`,
  );
  return { fleet, res, text: await res.text() };
}

describe('listRoute', () => {
  it('merges the clusters in fleet order under fleet names and one composite RV', async () => {
    const { res, text } = await list({
      east: () => podList('10', pod('a', '9')),
      west: () => podList('20', pod('b', '19')),
    });
    expect(res.status).toBe(200);
    const body = JSON.parse(text);
    expect(body.items.map((i: any) => i.metadata.name)).toEqual([
      'a.clusterspace.east',
      'b.clusterspace.west',
    ]);
    const rv = decodeComposite(body.metadata.resourceVersion, ['east', 'west']);
    expect(rv.ok && Object.fromEntries(rv.rvs)).toEqual({ east: '10', west: '20' });
  });

  it('sends each cluster its planned query and no fleet selector terms', async () => {
    const { fleet } = await list(
      { east: () => podList('1'), west: () => podList('2') },
      '?labelSelector=fleet.karmada.io%2Fcluster%3Dwest%2Capp%3Dweb&limit=5',
    );
    expect(fleet.sent).toEqual(['west GET /api/v1/pods?labelSelector=app%3Dweb&limit=5']);
  });

  it('skips a cluster that does not serve the resource and warns about one that fails', async () => {
    const { res, text } = await list({
      east: () => podList('1', pod('a', '1')),
      west: () => new Response('404 page not found', { status: 404 }),
      north: () => 'unreachable',
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(text).items).toHaveLength(1);
    expect(res.headers.get('warning')).toBe('299 - "cluster north: connection refused"');
  });

  it('fails the list in strict mode when a cluster fails, and when nobody answers', async () => {
    const strict = await list({ east: () => podList('1'), north: () => 'unreachable' }, '', { strict: true });
    expect(strict.res.status).toBe(503);
    expect(JSON.parse(strict.text).message).toContain('strict mode');
    const none = await list({ east: () => 'unreachable' });
    expect(none.res.status).toBe(503);
  });

  it("answers a cluster's 410 (its RV compacted away) as the list's, and a caller's 403 as is", async () => {
    const gone = await list({ east: () => podList('1'), west: () => status(410, 'Expired', 'too old') });
    expect(gone.res.status).toBe(410);
    const denied = await list({ east: () => status(403, 'Forbidden', 'pods is forbidden') });
    expect(denied.res.status).toBe(403);
    expect(JSON.parse(denied.text).reason).toBe('Forbidden');
  });

  it('refuses a bad selector or continue token before asking anyone', async () => {
    for (const q of ['?labelSelector=a%20in%20(', '?continue=garbage']) {
      const { res, fleet } = await list({ east: () => podList('1') }, q);
      expect(res.status).toBe(400);
      expect(fleet.sent).toEqual([]);
    }
  });

  it('pages across clusters: a token from one page resumes where it stopped', async () => {
    const clusters: Record<string, Cluster> = {
      east: (r) =>
        r.path.includes('continue=E2')
          ? podList('10', pod('c', '8'))
          : json({
              kind: 'PodList',
              apiVersion: 'v1',
              metadata: { resourceVersion: '10', continue: 'E2' },
              items: [pod('a', '5'), pod('b', '6')],
            }),
      west: () => podList('20', pod('d', '19')),
    };
    const first = JSON.parse((await list(clusters, '?limit=2')).text);
    expect(first.items.map((i: any) => i.metadata.name)).toEqual([
      'a.clusterspace.east',
      'b.clusterspace.east',
    ]);
    const next = await list(clusters, `?limit=2&continue=${first.metadata.continue}`);
    // east resumes from its own token; west starts at the RV the first page saw there
    expect(next.fleet.sent).toEqual([
      'east GET /api/v1/pods?continue=E2&limit=2',
      'west GET /api/v1/pods?resourceVersion=20&resourceVersionMatch=Exact&limit=2',
    ]);
    const page = JSON.parse(next.text);
    expect(page.items.map((i: any) => i.metadata.name)).toEqual([
      'c.clusterspace.east',
      'd.clusterspace.west',
    ]);
  });
});

// ------------------------------------------------------------------------------------ broken bodies

const enc = new TextEncoder();
const podListText = (rv: string, names: string[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion: rv, ...extra },
    items: names.map((n) => pod(n, rv)),
  });

/** `text` up to `at`, then the body fails as a cut connection does (or just ends, `clean`) */
function cutAt(text: string, at: number, clean = false): Response {
  let sent = false;
  // erroring drops what is queued: the bytes go out on one pull, the failure comes on the next
  const body = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        if (!sent && at > 0) {
          sent = true;
          c.enqueue(enc.encode(text.slice(0, at)));
        } else if (clean) c.close();
        else c.error(new TypeError('terminated'));
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { headers: { 'Content-Type': 'application/json' } });
}

/** `text` up to `at`, then silence (the socket stays open); `cancelled` says when the fleet let go */
function stallAt(text: string, at: number, seen: { cancelled: boolean }): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(enc.encode(text.slice(0, at)));
    },
    pull: () => new Promise(() => {}),
    cancel() {
      seen.cancelled = true;
    },
  });
  return new Response(body, { headers: { 'Content-Type': 'application/json' } });
}

async function brokenList(
  clusters: Record<string, Cluster>,
  query = '',
  opts: { strict?: boolean; gzip?: boolean } = {},
) {
  const fleet = fakeFleet(clusters, opts);
  (fleet.deps.config as any).timeouts = { bodyIdleSeconds: 0.2 };
  if (opts.gzip) (fleet.deps as any).gzipResponses = true;
  const res = await serve(
    (c, info) => listRoute(c, fleet.deps, info, fleet.targets, undefined),
    `http://fleet/api/v1/pods${query}`,
    opts.gzip ? { headers: { 'Accept-Encoding': 'gzip' } } : undefined,
  );
  const text = await res.text().then(
    (t) => t,
    (e: Error) => ({ broken: e }),
  );
  return { fleet, res, text };
}

const namesOf = (text: unknown) =>
  typeof text === 'string' ? JSON.parse(text).items.map((i: any) => i.metadata.name) : text;

describe('listRoute with bodies that break', () => {
  const east = podListText('10', ['a', 'b', 'c', 'd']);
  const midC = east.indexOf('"name":"c"');
  const west: Cluster = () => podList('20', pod('w', '19'));
  const all = ['a', 'b', 'c', 'd'].map((n) => `${n}.clusterspace.east`).concat('w.clusterspace.west');

  it('reads a body cut mid-items again at its exact RV, after the items already taken', async () => {
    let n = 0;
    const { fleet, res, text } = await brokenList({
      east: () => (n++ === 0 ? cutAt(east, midC) : json(JSON.parse(east))),
      west,
    });
    expect(res.status).toBe(200);
    expect(namesOf(text)).toEqual(all);
    expect(res.headers.get('warning')).toBeNull();
    expect(fleet.sent).toEqual([
      'east GET /api/v1/pods',
      'west GET /api/v1/pods',
      'east GET /api/v1/pods?resourceVersion=10&resourceVersionMatch=Exact',
    ]);
  });

  it('reads a body that goes silent again once the body-idle timeout passes, and lets go of it', async () => {
    const seen = { cancelled: false };
    let n = 0;
    const { res, text } = await brokenList({
      east: () => (n++ === 0 ? stallAt(east, midC, seen) : json(JSON.parse(east))),
      west,
    });
    expect(res.status).toBe(200);
    expect(namesOf(text)).toEqual(all);
    expect(seen.cancelled).toBe(true);
  });

  it('reads a cut page again with its own continue token and limit', async () => {
    const page = podListText('10', ['c', 'd', 'e'], { continue: 'E3' });
    const sent: string[] = [];
    let n = 0;
    const token = (
      JSON.parse(
        (
          await brokenList(
            {
              east: () =>
                json({
                  kind: 'PodList',
                  apiVersion: 'v1',
                  metadata: { resourceVersion: '10', continue: 'E2' },
                  items: [pod('a', '1'), pod('b', '1')],
                }),
              west,
            },
            '?limit=2',
          )
        ).text as string,
      ) as any
    ).metadata.continue;
    const { text } = await brokenList(
      {
        east: (r) => {
          sent.push(r.path);
          return n++ === 0 ? cutAt(page, page.indexOf('"name":"d"')) : json(JSON.parse(page));
        },
        west,
      },
      `?limit=2&continue=${token}`,
    );
    expect(sent).toEqual(['/api/v1/pods?continue=E2&limit=2', '/api/v1/pods?continue=E2&limit=2']);
    expect(namesOf(text)).toEqual(['c.clusterspace.east', 'd.clusterspace.east']);
  });

  it('breaks the merged body off when the re-read fails too: never a short 200 that looks whole', async () => {
    let n = 0;
    const { res, text } = await brokenList({
      east: () => (n++ === 0 ? cutAt(east, midC, true) : status(410, 'Expired', 'too old resource version')),
      west,
    });
    expect(res.status).toBe(200);
    expect(text).toHaveProperty('broken');
  });

  it('breaks off when the re-read holds another object where the last one taken was', async () => {
    let n = 0;
    const { text } = await brokenList({
      east: () => (n++ === 0 ? cutAt(east, midC) : json(JSON.parse(podListText('10', ['a', 'x', 'c', 'd'])))),
      west,
    });
    expect(text).toHaveProperty('broken');
  });

  it('answers a 503 Status, not a broken gzip body, when nothing was sent yet', async () => {
    let n = 0;
    const { res, text } = await brokenList(
      { east: () => (n++ === 0 ? cutAt(east, midC) : 'unreachable'), west },
      '',
      { gzip: true },
    );
    expect(res.status).toBe(503);
    expect(JSON.parse(text as string)).toMatchObject({ kind: 'Status', code: 503 });
    expect(JSON.parse(text as string).message).toContain('cluster east');
  });

  it('leaves out a body that never began, asks once more for one that broke in its head', async () => {
    const empty = await brokenList({ east: () => cutAt(east, 0, true), west });
    expect(empty.res.status).toBe(200);
    expect(namesOf(empty.text)).toEqual(['w.clusterspace.west']);
    expect(empty.res.headers.get('warning')).toContain('cluster east: its list body');
    expect(empty.fleet.sent).toHaveLength(2);

    let n = 0;
    const head = await brokenList({
      east: () => (n++ === 0 ? cutAt(east, 20) : json(JSON.parse(east))),
      west,
    });
    expect(namesOf(head.text)).toEqual(all);
    expect(head.res.headers.get('warning')).toBeNull();

    const strict = await brokenList({ east: () => cutAt(east, 0, true), west }, '', { strict: true });
    expect(strict.res.status).toBe(503);
  });

  it('reads a cut Table again and skips the rows already sent', async () => {
    const table = JSON.stringify({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { resourceVersion: '10' },
      columnDefinitions: [{ name: 'Name', type: 'string', format: 'name' }],
      rows: ['a', 'b', 'c'].map((n) => ({ cells: [n], object: { metadata: { name: n } } })),
    });
    let n = 0;
    const { text } = await brokenList({
      east: () => (n++ === 0 ? cutAt(table, table.indexOf('"cells":["c"')) : json(JSON.parse(table))),
    });
    const rows = JSON.parse(text as string).rows;
    expect(rows.map((r: any) => r.object.metadata.name)).toEqual(
      ['a', 'b', 'c'].map((x) => `${x}.clusterspace.east`),
    );
  });
});

// ------------------------------------------------------------------------------------------ gzip

function sized(size: number, chunk = 10_000): ReadableStream<Uint8Array> {
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
    const r = await gzipIfLarge(sized(GZIP_THRESHOLD - 1), 200, new Headers());
    expect(r.headers.get('content-encoding')).toBeNull();
    expect(r.headers.get('content-length')).toBe(String(GZIP_THRESHOLD - 1));
    expect((await r.arrayBuffer()).byteLength).toBe(GZIP_THRESHOLD - 1);
  });

  it('gzips answers from the threshold on, losslessly', async () => {
    const size = GZIP_THRESHOLD * 3 + 17;
    const r = await gzipIfLarge(sized(size), 200, new Headers());
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
