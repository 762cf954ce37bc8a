/**
 * Merged lists whose member body breaks, through the fault proxy, on Node and in workerd (issue 11.2): a
 * body cut or silent mid-stream is read again from that cluster at the exact resourceVersion (or its
 * continue token) and the client gets every item exactly once, compared with the simulated clusters' own
 * lists; when the re-read fails too, the client gets an error it can see (a broken transfer or a Status),
 * never a 200 whose item set is silently short. JSON and Table, with and without gzip, paged too.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getWhole, itemNames, type Whole } from '../faults/client.ts';
import type { Fault } from '../faults/faults.ts';
import { type FaultFleet, startFaultFleet } from '../faults/fleet.ts';
import { seedNamespace } from '../faults/scenario.ts';
import { RUNTIMES } from '../helpers/fleet.ts';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const ENCODINGS: Array<[string, Record<string, string>]> = [
  ['identity', {}],
  ['gzip', { 'Accept-Encoding': 'gzip' }],
];

/** every ConfigMap of `ns` as each simulated cluster lists it itself, under the fleet's names */
async function clusterNames(ff: FaultFleet, ns: string): Promise<string[]> {
  const out: string[] = [];
  for (const [cluster, url] of [['karmada', ff.sims.karmadaUrl], ...ff.sims.memberUrls] as const) {
    const l = (await (await fetch(`${url}/api/v1/namespaces/${ns}/configmaps`)).json()) as {
      items: Array<{ metadata: { name: string } }>;
    };
    for (const i of l.items)
      out.push(cluster === 'karmada' ? i.metadata.name : `${i.metadata.name}.clusterspace.${cluster}`);
  }
  return out.sort();
}

/** the row names of a Table list, or undefined when the body is not a whole Table */
function rowNames(text: string): string[] | undefined {
  try {
    const t = JSON.parse(text) as { rows?: Array<{ cells: unknown[] }> };
    return t.rows?.map((r) => String(r.cells[0])).sort();
  } catch {
    return undefined;
  }
}

/** the client could tell it did not get everything: not a 200 whose body ended cleanly as a list */
function visiblyFailed(r: Whole): boolean {
  return !(r.status === 200 && r.complete && itemNames(r.text) !== undefined);
}

describe.each(RUNTIMES)('merged lists with a broken member body on %s', (runtime) => {
  let ff: FaultFleet;
  const ns = `lf-${runtime}`;
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  let expected: string[];
  let member2Bytes: number;
  let member2RV: string;
  beforeAll(async () => {
    ff = await startFaultFleet(runtime, {
      config: { timeouts: { requestSeconds: 30, bodyIdleSeconds: 1 } },
    });
    // padded so that a cut half-way through member2's body lands between its items
    seedNamespace(ff, ns, { karmada: 2, member1: 5, member2: 30, member3: 5 }, 200);
    expected = await clusterNames(ff, ns);
    const own = await (await fetch(`${ff.sims.memberUrls.get('member2')}${path}`)).text();
    member2Bytes = own.length;
    member2RV = (JSON.parse(own) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  });
  afterEach(() => ff.reset());
  afterAll(async () => {
    await ff?.stop();
  });

  const onMember2 = (fault: Fault, query: Record<string, string | true | false> = { watch: false }) =>
    ff.cluster('member2').on({ path, query }, fault);
  const rereads = () =>
    ff
      .cluster('member2')
      .requests()
      .filter((r) => r.path === path && r.query.get('resourceVersionMatch') === 'Exact')
      .map((r) => r.query.get('resourceVersion'));

  it.each(ENCODINGS)(
    'a body cut half-way (%s): every item exactly once, member2 read again at its exact RV',
    async (_e, headers) => {
      const cut = onMember2({ kind: 'cut', phase: 'body', bytes: Math.floor(member2Bytes / 2) });
      const r = await getWhole(`${ff.url}${path}`, { Accept: 'application/json', ...headers });
      expect(cut.applied).toBe(1);
      expect([r.status, r.complete]).toEqual([200, true]);
      expect(itemNames(r.text)).toEqual(expected);
      expect(r.headers.warning).toBeUndefined();
      expect(rereads()).toEqual([member2RV]);
    },
  );

  it('a body reset mid-stream (TCP RST): every item exactly once', async () => {
    onMember2({ kind: 'rstAfter', phase: 'body', bytes: Math.floor(member2Bytes / 3) });
    const r = await getWhole(`${ff.url}${path}`, { Accept: 'application/json' });
    expect([r.status, r.complete]).toEqual([200, true]);
    expect(itemNames(r.text)).toEqual(expected);
  });

  it.each(ENCODINGS)(
    'a body that goes silent mid-stream (%s): read again once the body-idle timeout passes',
    async (_e, headers) => {
      onMember2({ kind: 'stall', phase: 'body', bytes: Math.floor(member2Bytes / 2) });
      const r = await getWhole(`${ff.url}${path}`, { Accept: 'application/json', ...headers }, 20_000);
      expect([r.status, r.complete]).toEqual([200, true]);
      expect(itemNames(r.text)).toEqual(expected);
      expect(r.ms, 'well before kubectl gives up (32 s)').toBeLessThan(15_000);
      expect(rereads()).toEqual([member2RV]);
    },
  );

  it('a body that goes silent after 20 bytes, inside its head: asked once more, complete', async () => {
    onMember2({ kind: 'stall', phase: 'body', bytes: 20 });
    const r = await getWhole(`${ff.url}${path}`, { Accept: 'application/json' }, 20_000);
    expect([r.status, r.complete]).toEqual([200, true]);
    expect(itemNames(r.text)).toEqual(expected);
    expect(r.ms).toBeLessThan(15_000);
  });

  it('a Table (as kubectl asks) cut half-way: every row exactly once', async () => {
    const table = (await (
      await fetch(`${ff.sims.memberUrls.get('member2')}${path}`, { headers: { Accept: TABLE } })
    ).text()) as string;
    onMember2({ kind: 'cut', phase: 'body', bytes: Math.floor(table.length / 2) });
    const r = await getWhole(`${ff.url}${path}`, { Accept: TABLE });
    expect([r.status, r.complete]).toEqual([200, true]);
    expect(rowNames(r.text)).toEqual(expected);
  });

  it('pages (limit=12) with a cut in a continued page: every item exactly once across the pages', async () => {
    // the second page of member2 (asked with member2's own continue token) is cut
    onMember2({ kind: 'cut', phase: 'body', bytes: 900 }, { continue: true });
    const got: string[] = [];
    let token = '';
    for (let page = 0; page < 20; page++) {
      const q = `limit=12${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
      const r = await getWhole(`${ff.url}${path}?${q}`, { Accept: 'application/json' });
      expect([r.status, r.complete]).toEqual([200, true]);
      const body = JSON.parse(r.text) as { items: Array<{ metadata: { name: string } }>; metadata: any };
      got.push(...body.items.map((i) => i.metadata.name));
      token = body.metadata.continue ?? '';
      if (!token) break;
    }
    expect(got.sort()).toEqual(expected);
    const continued = ff
      .cluster('member2')
      .requests()
      .filter((r) => r.query.has('continue'));
    // the cut page was asked again with the same token
    expect(continued.length).toBeGreaterThanOrEqual(2);
    expect(continued[1]!.query.get('continue')).toBe(continued[0]!.query.get('continue'));
  });

  it.each(ENCODINGS)(
    'a cut whose re-read fails too (%s): the client sees an error, never a whole-looking short 200',
    async (_e, headers) => {
      // every re-read at the exact RV is refused as compacted
      const refused = ff
        .cluster('member2')
        .on(
          { path, query: { resourceVersionMatch: 'Exact' } },
          { kind: 'status', code: 410 },
          { times: Number.POSITIVE_INFINITY },
        );
      onMember2({ kind: 'cut', phase: 'body', bytes: Math.floor(member2Bytes / 2) });
      const r = await getWhole(`${ff.url}${path}`, { Accept: 'application/json', ...headers });
      expect(refused.applied).toBeGreaterThanOrEqual(1);
      expect(r.status, 'answered').not.toBe(0);
      expect(r.status).not.toBe(500);
      expect(visiblyFailed(r), `status ${r.status}, complete ${r.complete}`).toBe(true);
      if (r.status !== 200) expect(JSON.parse(r.text)).toMatchObject({ kind: 'Status', code: 503 });
    },
  );

  it('headers, then the end before any body byte: member2 left out with a Warning naming it', async () => {
    onMember2({ kind: 'eofAfterHeaders' });
    const r = await getWhole(`${ff.url}${path}`, { Accept: 'application/json' });
    expect([r.status, r.complete]).toEqual([200, true]);
    expect(String(r.headers.warning)).toMatch(/cluster member2: its list body/);
    expect(itemNames(r.text)).toEqual(expected.filter((n) => !n.endsWith('.clusterspace.member2')));
  });
});
