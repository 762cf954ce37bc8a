/**
 * Where a merged watch's first event spends its time on the real bed (issue 33): the bed started once
 * (its fleets in this process), then per round the lists, E changes per member, and the watches opened
 * from the lists' RVs, as the bench's real-watch does (fleet-direct, fleet-karmada, the members directly,
 * order rotating; a client in this process, each watch on a connection of its own that has just answered a
 * `limit=1` list, as kubectl get -w's watch goes on its list's connection; COLD=1: a new connection per
 * watch, its full TLS handshake timed, as this tool did before). Prints each watch's time to
 * its head and first event; with the marks of ./firstevent-timeline.patch applied (globalThis.__wtl) also
 * when the request arrived, the head was decided and the first chunk sent, and how long the tls.connect
 * calls took, and per fleet the medians of its own part (arrival → first send, head decided → first
 * send: no client handshake in them); TIMELINE=1 every mark. IMPERSONATED=1 adds `direct-imp`: the
 * members watched directly as the fleets ask them (the fleet's certificate, Impersonate-User and -Group
 * of the caller), what the members alone take to answer the fleets' form of the request. BENCH_AB=1 runs each fleet watch twice per
 * round, the patch's base switch (globalThis.__wtlBase: the sources started inside the body's start and
 * every held chunk handed on at once, as before) on and off, alternating which goes first.
 * VIA_KARMADA=1 adds `direct-via-karmada`: the members watched through Karmada's cluster proxy without a
 * fleet. With ./firstevent-grace-ab.patch instead (the same marks, plus each source's GET written, 200,
 * first event read and the head sent; its base switch: the head waits up to 50 ms for every source as
 * before), a line per fleet watch with those marks from its arrival and the Karmada proxy's new
 * connections to the members, medians of them per fleet, and GRACES=5,10 times each fleet watch again
 * with those head graces (ms) in the same rounds.
 *   git apply bench/lib/firstevent-timeline.patch   # for the run only; `git apply -R` after
 *   BENCH_AB=1 npx tsx bench/lib/firstevent-timeline.ts [rounds=5] [objects=300]
 *   git apply bench/lib/firstevent-grace-ab.patch && BENCH_AB=1 GRACES=5 VIA_KARMADA=1 npx tsx bench/lib/firstevent-timeline.ts 10 300
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { Client, request } from 'undici';
import { FLEET_USER, startBed } from '../../testbed/bed.ts';
import { httpsRequest } from '../../testbed/process.ts';
import { median } from './stats.ts';

const NS = 'bench-real';
const path = `/api/v1/namespaces/${NS}/configmaps`;
const R = Number(process.argv[2] ?? 5);
const N = Number(process.argv[3] ?? 300);
const E = Math.min(N, 100);
const showTimeline = process.env.TIMELINE === '1';
const AB = process.env.BENCH_AB === '1';
const COLD = process.env.COLD === '1';
const IMPERSONATED = process.env.IMPERSONATED === '1';
/** VIA_KARMADA=1 adds `direct-via-karmada`: the members watched through Karmada's cluster proxy, no fleet */
const VIA_KARMADA = process.env.VIA_KARMADA === '1';
/** GRACES=0,5 (with BENCH_AB=1 and firstevent-grace-ab.patch): each fleet watch also with these head graces */
const GRACES = (process.env.GRACES ?? '').split(',').filter(Boolean).map(Number);

let marks: Array<[number, string]> | undefined;
(globalThis as { __wtl?: (l: string) => void }).__wtl = (l) => marks?.push([performance.now(), l]);

interface Tls {
  ca: string;
  cert: string;
  key: string;
}

/**
 * The TCP connections process `pid` holds to any of `ports` (its sockets' local ports): Karmada's cluster
 * proxy (pkg/util/proxy createProxyTransport, DisableKeepAlives) dials its member once per proxied request.
 */
function connsTo(pid: number | undefined, ports: Set<number>): Set<string> {
  const out = new Set<string>();
  if (pid === undefined) return out;
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]!);
      } catch {}
    }
    for (const f of ['tcp', 'tcp6'])
      for (const line of readFileSync(`/proc/${pid}/net/${f}`, 'utf8').split('\n').slice(1)) {
        const c = line.trim().split(/\s+/);
        if (c.length < 10 || c[3] !== '01' || !inodes.has(c[9]!)) continue;
        if (ports.has(Number.parseInt(c[2]!.split(':')[1]!, 16))) out.add(c[1]!);
      }
  } catch {}
  return out;
}

/** ms of one full TLS handshake (no session to resume, no client certificate) to `url`: Karmada's proxy's dial */
function handshakeMs(url: string, ca: string): Promise<number> {
  const u = new URL(url);
  const t = performance.now();
  return new Promise((done, fail) => {
    const s = tlsConnect({ host: u.hostname, port: Number(u.port), ca, servername: 'localhost' }, () => {
      done(performance.now() - t);
      s.destroy();
    });
    s.on('error', fail);
  });
}

/**
 * Karmada's hop apart (VIA_KARMADA=1): ms of a small GET on a kept-alive connection, `n` times each of
 * (a) the member directly, (b) its Cluster object from the aggregated apiserver through karmada-apiserver
 * (the aggregation hop, no member dialled), (c) the member through the cluster proxy (that hop plus the
 * proxy's dial of the member), interleaved.
 */
async function karmadaHops(
  member: { url: string; tls: Tls },
  karmada: { url: string; tls: Tls },
  name: string,
  n: number,
): Promise<Record<'direct' | 'cluster' | 'proxy', number[]>> {
  const client = (u: string, t: Tls) =>
    new Client(new URL(u).origin, { connect: { ca: t.ca, cert: t.cert, key: t.key } });
  const m = client(member.url, member.tls);
  const k = client(karmada.url, karmada.tls);
  const asks = {
    direct: () => request(`${member.url}${path}?limit=1`, { dispatcher: m }),
    cluster: () =>
      request(`${karmada.url}/apis/cluster.karmada.io/v1alpha1/clusters/${name}`, { dispatcher: k }),
    proxy: () =>
      request(`${karmada.url}/apis/cluster.karmada.io/v1alpha1/clusters/${name}/proxy${path}?limit=1`, {
        dispatcher: k,
      }),
  };
  const out = { direct: [] as number[], cluster: [] as number[], proxy: [] as number[] };
  for (let i = -1; i < n; i++)
    for (const key of ['direct', 'cluster', 'proxy'] as const) {
      const t = performance.now();
      const r = await asks[key]();
      await r.body.text();
      if (r.statusCode !== 200) throw new Error(`${key}: ${r.statusCode}`);
      // the first of each warms its connection
      if (i >= 0) out[key].push(performance.now() - t);
    }
  await Promise.all([m.close(), k.close()]);
  return out;
}

/** set by the bed's start: the connections the proxied watches opened, counted when every event is in */
let proxyConns: (() => Set<string>) | undefined;

async function pool<T>(xs: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, xs.length) }, async () => {
      while (next < xs.length) await fn(xs[next++]!);
    }),
  );
}

async function listRv(url: string, tls: Tls): Promise<string> {
  const r = await httpsRequest(url, tls, { timeoutMs: 120_000 });
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.body.slice(0, 200)}`);
  return (JSON.parse(r.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

/** the watches opened at once; ms to the first head and the first event of any */
type Step = { url: string; tls: Tls; headers?: Record<string, string> };

async function watch(steps: Step[], expect: number) {
  // one connection per stream; unless COLD, warm: a limit=1 list on it first, untimed
  const agents = steps.map(
    (s) => new Client(new URL(s.url).origin, { connect: { ca: s.tls.ca, cert: s.tls.cert, key: s.tls.key } }),
  );
  if (!COLD)
    await Promise.all(
      steps.map(async (s, i) => {
        const u = new URL(s.url);
        const r = await request(`${u.origin}${u.pathname}?limit=1`, {
          headers: { accept: 'application/json' },
          dispatcher: agents[i]!,
        });
        await r.body.text();
      }),
    );
  const t0 = performance.now();
  marks = [[t0, 'client: request']];
  const ac = new AbortController();
  const connsBefore = proxyConns?.();
  let connsNew = Number.NaN;
  let head = Number.NaN;
  let first = Number.NaN;
  let got = 0;
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${got}/${expect} events`)), 120_000);
    steps.forEach((s, i) => {
      request(s.url, {
        headers: { accept: 'application/json', ...s.headers },
        dispatcher: agents[i]!,
        signal: ac.signal,
        bodyTimeout: 0,
      }).then(async (res) => {
        const t = performance.now();
        marks?.push([t, `client: head ${i} ${res.statusCode}`]);
        if (Number.isNaN(head)) head = t;
        let carry = '';
        try {
          for await (const chunk of res.body as AsyncIterable<Buffer>) {
            const lines = (carry + chunk.toString('utf8')).split('\n');
            carry = lines.pop()!;
            for (const l of lines) {
              if (!l.trim() || l.includes('"BOOKMARK"')) continue;
              if (Number.isNaN(first)) {
                first = performance.now();
                marks?.push([first, `client: first event (stream ${i})`]);
              }
              if (++got >= expect) {
                if (connsBefore) connsNew = [...proxyConns!()].filter((c) => !connsBefore.has(c)).length;
                clearTimeout(timer);
                done();
              }
            }
          }
        } catch {}
      }, fail);
    });
  });
  ac.abort();
  const tl = marks;
  marks = undefined;
  for (const a of agents) void a.destroy().catch(() => {});
  // the fleet's synchronous connect work: from each tls.connect call to its socket (the hook's marks)
  let connectMs = 0;
  const at = new Map<string, number>();
  for (const [t, l] of tl) {
    if (l.startsWith('tlsTo ')) at.set(l.slice(6), t);
    const d = /^upstream dial (\S+)/.exec(l);
    if (d && at.has(d[1]!)) {
      connectMs += t - at.get(d[1]!)!;
      at.delete(d[1]!);
    }
  }
  const arrive = tl.find(([, l]) => l === 'arrive')?.[0];
  const decided = tl.find(([, l]) => l.startsWith('head decided'))?.[0];
  const firstSend = tl.find(([, l]) => l.startsWith('send '))?.[0];
  const phases =
    arrive === undefined
      ? ''
      : `arrive ${(arrive - t0).toFixed(0)}, head decided ${((decided ?? Number.NaN) - t0).toFixed(0)}, first send ${((firstSend ?? Number.NaN) - t0).toFixed(0)}, tls.connect calls ${connectMs.toFixed(1)} ms`;
  // per source, ms from arrival: GET written (in order), 200 read, first event read; head sent
  const rel = (t: number | undefined) => (arrive === undefined || t === undefined ? Number.NaN : t - arrive);
  const at0 = (p: string) => tl.filter(([, l]) => l.startsWith(p));
  const written = at0('GET written ').map(([t]) => rel(t));
  const answered = at0('answered ').map(([t, l]) => [rel(t), l.slice(9)] as const);
  const evRead = at0('first event read ').map(([t, l]) => [rel(t), l.slice(17)] as const);
  const headSent = rel(tl.find(([, l]) => l === 'head sent')?.[0]);
  const sources =
    arrive === undefined
      ? ''
      : `GETs written ${written.map((x) => x.toFixed(1)).join(' ')}; 200s ${answered.map(([x, l]) => `${l.replace(/^cluster /, '')}@${x.toFixed(1)}`).join(' ')}; first events read ${evRead.map(([x, l]) => `${l.replace(/^cluster /, '')}@${x.toFixed(1)}`).join(' ')}; head sent ${headSent.toFixed(1)}; first send ${rel(firstSend).toFixed(1)}`;
  // each member's open → 200 (the control plane's own part, `karmada`, left out)
  const opened = new Map(at0('open ').map(([t, l]) => [l.slice(5), t] as const));
  const memberAnswer = median(
    at0('answered cluster member').map(([t, l]) => t - (opened.get(l.slice(9).replace(/ \d+$/, '')) ?? t)),
  );
  const ok200 = answered.filter(([, l]) => l.endsWith(' 200')).map(([x]) => x);
  return {
    connsNew,
    sources,
    marks: {
      memberAnswer,
      lastGet: written.length ? Math.max(...written) : Number.NaN,
      first200: ok200.length ? Math.min(...ok200) : Number.NaN,
      last200: ok200.length ? Math.max(...ok200) : Number.NaN,
      firstEvRead: evRead.length ? Math.min(...evRead.map(([x]) => x)) : Number.NaN,
      headSent,
      firstSend: rel(firstSend),
      clientFirst: arrive === undefined ? Number.NaN : first - arrive,
    },
    phases,
    // the fleet's own part, from the request's arrival to its first write (no client handshake in it)
    ownMs: arrive === undefined || firstSend === undefined ? Number.NaN : firstSend - arrive,
    decidedToSendMs: decided === undefined || firstSend === undefined ? Number.NaN : firstSend - decided,
    headMs: head - t0,
    firstMs: first - t0,
    timeline: tl.map(([t, l]) => `${(t - t0).toFixed(1).padStart(7)}  ${l}`),
  };
}

const bed = await startBed({ log: (l) => console.error(`bed: ${l}`) });
try {
  await Promise.all(
    bed.members.map(async (m) => {
      await m.apiserver.request('/api/v1/namespaces', {
        method: 'POST',
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
      });
      await pool(
        Array.from({ length: N }, (_, i) => i),
        8,
        async (i) => {
          await m.apiserver.request(path, {
            method: 'POST',
            body: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `cm-${i}` },
              data: { benchItem: String(i), round: '0', pad: 'x'.repeat(480) },
            },
          });
        },
      );
    }),
  );
  const admin = bed.user('bed-admin', ['system:masters']);
  const fleetTls = { ca: bed.fleetCA.cert, cert: admin.cert, key: admin.key };
  const memberTls = (m: (typeof bed.members)[number]) => ({
    ca: m.apiserver.ca,
    cert: m.apiserver.admin.cert,
    key: m.apiserver.admin.key,
  });
  // the fleets' own identity in a member (testbed/bed.ts FLEET_USER), for direct-imp
  const fleetAs = (m: (typeof bed.members)[number]) => {
    const c = m.apiserver.pki.client(FLEET_USER);
    return { ca: m.apiserver.ca, cert: c.cert, key: c.key };
  };
  const aggregated = Object.entries(bed.karmada.procs).find(([n]) => n.includes('aggregated'))?.[1]?.pid;
  const memberPorts = new Set(bed.members.map((m) => Number(new URL(m.apiserver.url).port)));
  proxyConns = () => connsTo(aggregated, memberPorts);
  const handshakes: number[] = [];
  const hops = { direct: [] as number[], cluster: [] as number[], proxy: [] as number[] };
  const fleets = { 'fleet-direct': bed.fleets.direct.url, 'fleet-karmada': bed.fleets.karmada.url };
  // the Karmada fleet's membership comes from Karmada: wait until it lists every member's objects
  for (let i = 0; i < 120; i++) {
    const r = await httpsRequest(`${fleets['fleet-karmada']}${path}`, fleetTls, { timeoutMs: 60_000 });
    if (r.status === 200 && (r.body.match(/"benchItem":"/g)?.length ?? 0) === N * bed.members.length) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const results: Record<string, number[]> = {};
  const own: Record<string, Array<[number, number]>> = {};
  const parts: Record<string, Array<Record<string, number>>> = {};
  for (let r = 0; r < R; r++) {
    const rvs: Record<string, string> = {};
    for (const [f, url] of Object.entries(fleets)) rvs[f] = await listRv(`${url}${path}`, fleetTls);
    for (const m of bed.members)
      rvs[m.name] = await listRv(`${m.apiserver.url}${path}?limit=1`, memberTls(m));
    await Promise.all(
      bed.members.map((m) =>
        pool(
          Array.from({ length: E }, (_, i) => i),
          8,
          async (i) => {
            await m.apiserver.request(`${path}/cm-${i}`, {
              method: 'PATCH',
              body: { data: { round: String(r + 1) } },
              contentType: 'application/merge-patch+json',
            });
          },
        ),
      ),
    );
    for (const m of bed.members) handshakes.push(await handshakeMs(m.apiserver.url, m.apiserver.ca));
    if (VIA_KARMADA) {
      const m = bed.members[r % bed.members.length]!;
      const k = bed.karmadaApiserver;
      const h = await karmadaHops(
        { url: m.apiserver.url, tls: memberTls(m) },
        { url: k.url, tls: { ca: k.ca, cert: k.admin.cert, key: k.admin.key } },
        m.name,
        5,
      );
      for (const key of ['direct', 'cluster', 'proxy'] as const) hops[key].push(...h[key]);
    }
    const w = (base: string, rv: string) =>
      `${base}${path}?watch=true&resourceVersion=${encodeURIComponent(rv)}`;
    const targets: Array<[string, Step[]]> = [
      ...Object.entries(fleets).map(([f, url]): [string, Step[]] => [
        f,
        [{ url: w(url, rvs[f]!), tls: fleetTls }],
      ]),
      ['direct', bed.members.map((m) => ({ url: w(m.apiserver.url, rvs[m.name]!), tls: memberTls(m) }))],
      ...(VIA_KARMADA
        ? [
            [
              'direct-via-karmada',
              bed.members.map((m) => ({
                url: w(
                  `${bed.karmadaApiserver.url}/apis/cluster.karmada.io/v1alpha1/clusters/${m.name}/proxy`,
                  rvs[m.name]!,
                ),
                tls: {
                  ca: bed.karmadaApiserver.ca,
                  cert: bed.karmadaApiserver.admin.cert,
                  key: bed.karmadaApiserver.admin.key,
                },
              })),
            ] as [string, Step[]],
          ]
        : []),
      ...(IMPERSONATED
        ? [
            [
              'direct-imp',
              bed.members.map((m) => ({
                url: w(m.apiserver.url, rvs[m.name]!),
                tls: fleetAs(m),
                headers: { 'impersonate-user': 'bed-admin', 'impersonate-group': 'system:masters' },
              })),
            ] as [string, Step[]],
          ]
        : []),
    ];
    const k = r % targets.length;
    const order = [...targets.slice(k), ...targets.slice(0, k)];
    // A/B (BENCH_AB=1): each fleet watch once as the base (the tree's __wtlBase switch) and once as new
    const all = AB ? ['base', 'new', ...GRACES.map((g) => `grace${g}`)] : ['new'];
    const modes = [...all.slice(r % all.length), ...all.slice(0, r % all.length)];
    for (const [name, steps] of order)
      for (const mode of name.startsWith('direct') ? [name] : modes) {
        (globalThis as { __wtlBase?: boolean }).__wtlBase = mode === 'base';
        (globalThis as { __wtlGrace?: number }).__wtlGrace = mode.startsWith('grace')
          ? Number(mode.slice(5))
          : undefined;
        // the watches opened from the same RVs replay the same changes: each run is the same work
        const x = await watch(steps, E * bed.members.length);
        const key = name.startsWith('direct') ? name : AB ? `${name} ${mode}` : name;
        results[key] = [...(results[key] ?? []), x.firstMs];
        if (!name.startsWith('direct')) {
          own[key] = [...(own[key] ?? []), [x.ownMs, x.decidedToSendMs]];
          parts[key] = [...(parts[key] ?? []), x.marks];
        }
        console.log(
          `round ${r + 1} ${key}: head ${x.headMs.toFixed(1)} ms, first event ${x.firstMs.toFixed(1)} ms; ${x.phases}`,
        );
        if (x.sources)
          console.log(
            `    ${x.sources}; karmada-aggregated-apiserver's new connections to the members: ${x.connsNew}`,
          );
        if (showTimeline) console.log(x.timeline.map((l) => `    ${l}`).join('\n'));
      }
    console.log(
      `round ${r + 1} ratios: ${Object.keys(results)
        .filter((k) => k !== 'direct')
        .map((f) => `${f} ${(results[f]!.at(-1)! / results.direct!.at(-1)!).toFixed(2)}`)
        .join(', ')}`,
    );
  }
  for (const [n, xs] of Object.entries(results))
    console.log(
      `${n}: first event median ${median(xs).toFixed(1)} ms (${xs.map((x) => x.toFixed(0)).join(' ')})`,
    );
  for (const [n, xs] of Object.entries(own))
    if (xs.some(([a]) => Number.isFinite(a)))
      console.log(
        `${n}: arrival → first send median ${median(xs.map(([a]) => a)).toFixed(1)} ms (${xs.map(([a]) => a.toFixed(0)).join(' ')}), head decided → first send median ${median(xs.map(([, d]) => d)).toFixed(1)} ms (${xs.map(([, d]) => d.toFixed(0)).join(' ')})`,
      );
  for (const [n, xs] of Object.entries(parts))
    if (xs.some((m) => Number.isFinite(m.first200)))
      console.log(
        `${n}: medians from arrival (ms): ${Object.keys(xs[0]!)
          .map((k) => `${k} ${median(xs.map((m) => m[k]!).filter(Number.isFinite)).toFixed(1)}`)
          .join(
            ', ',
          )}; last200 − first200 ${median(xs.map((m) => m.last200! - m.first200!).filter(Number.isFinite)).toFixed(1)}`,
      );
  console.log(
    `a full TLS handshake to a member (Node client, no session): median ${median(handshakes).toFixed(1)} ms (${handshakes.map((x) => x.toFixed(1)).join(' ')})`,
  );
  if (hops.direct.length)
    console.log(
      `a small GET on a kept-alive connection, medians of ${hops.direct.length}: member directly ${median(hops.direct).toFixed(1)} ms, its Cluster through karmada-apiserver (the aggregation hop) ${median(hops.cluster).toFixed(1)} ms, the member through Karmada's cluster proxy ${median(hops.proxy).toFixed(1)} ms`,
    );
  // paired: each mode ÷ the base in the same round
  for (const k of Object.keys(results).filter((k) => / (new|grace\d+)$/.test(k))) {
    const b = results[k.replace(/ \S+$/, ' base')];
    if (b)
      console.log(
        `${k} ÷ base per round: median ${median(results[k]!.map((x, i) => x / b[i]!)).toFixed(2)} (${results[k]!.map((x, i) => (x / b[i]!).toFixed(2)).join(' ')})`,
      );
  }
  for (const f of Object.keys(results).filter((k) => k !== 'direct'))
    console.log(
      `${f} ÷ direct per round: median ${median(results[f]!.map((x, i) => x / results.direct![i]!)).toFixed(2)}`,
    );
} finally {
  await bed.stop();
}
