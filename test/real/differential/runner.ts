/**
 * Runs the differential check's cases (catalogue.ts) against one side and returns what is compared of its
 * answers, normalised: decoded bodies (JSON, YAML, protobuf through the sim's codec), every page of a paged
 * list, a watch's event sequence.
 */
import { parse as parseYaml } from 'yaml';
import { decodeEnvelope, decodeUnknown } from '../../../sim/proto/envelope.ts';
import {
  type Case,
  type Ctx,
  catalogue,
  JSON_ACCEPT,
  type Kind,
  PROTOBUF,
  seed,
  type WatchCase,
} from './catalogue.ts';
import { type Answer, type Sent, send, type Target, type WatchEvent, watch } from './client.ts';
import { differences, normalise } from './normalise.ts';

export const UA = 'differential/v0.0.0 (linux/amd64) kubernetes/diff';

function decode(a: Answer): unknown {
  try {
    if (a.contentType.startsWith(PROTOBUF)) return decodeUnknown(decodeEnvelope(new Uint8Array(a.body)));
    if (a.contentType.includes('yaml')) return parseYaml(a.body.toString());
    if (a.contentType.includes('json')) return JSON.parse(a.body.toString());
  } catch (e) {
    return { undecodable: String(e) };
  }
  return a.body.length ? { text: a.body.toString().slice(0, 200) } : undefined;
}

function defaultView(a: Answer, json: unknown): unknown {
  return {
    status: a.status,
    contentType: a.contentType,
    warning: a.headers.warning,
    body: json,
  };
}

/** one side's resources by "group/version/resource" (the group list first, then every group version) */
export async function served(t: Target): Promise<Map<string, Kind>> {
  const out = new Map<string, Kind>();
  const gvs = ['v1'];
  const groups = JSON.parse((await send(t, get('/apis'))).body.toString()) as {
    groups: Array<{ name: string; versions: Array<{ groupVersion: string }> }>;
  };
  for (const g of groups.groups) for (const v of g.versions) gvs.push(v.groupVersion);
  for (const gv of gvs) {
    const a = await send(t, get(gv === 'v1' ? '/api/v1' : `/apis/${gv}`));
    if (a.status !== 200) continue;
    const list = JSON.parse(a.body.toString()) as {
      resources: Array<{ name: string; kind: string; namespaced: boolean; verbs: string[] }>;
    };
    const [group, version] = gv.includes('/') ? gv.split('/') : ['', gv];
    for (const r of list.resources) {
      // subresources count as served (discovery is compared on them) but are no kinds of their own
      if (r.name.includes('/')) {
        out.set(`${gv}/${r.name}`, {
          group: group!,
          version: version!,
          resource: r.name,
          kind: r.kind,
          namespaced: r.namespaced,
          verbs: ['sub'],
        });
        continue;
      }
      out.set(`${gv}/${r.name}`, {
        group: group!,
        version: version!,
        resource: r.name,
        kind: r.kind,
        namespaced: r.namespaced,
        verbs: r.verbs,
      });
    }
  }
  return out;
}

export function get(path: string, accept = JSON_ACCEPT): Sent {
  return { method: 'GET', path, headers: { accept, 'user-agent': UA } };
}

function withUA(s: Sent): Sent {
  return { ...s, headers: { 'user-agent': UA, ...s.headers } };
}

async function listRv(t: Target, ns: string): Promise<string> {
  const a = await send(t, get(`/api/v1/namespaces/${ns}/configmaps`));
  return (JSON.parse(a.body.toString()) as { metadata: { resourceVersion: string } }).metadata
    .resourceVersion;
}

async function resolve(t: Target, ns: string, s: Sent): Promise<Sent> {
  if (!s.path.includes('{rv')) return withUA(s);
  const rv = await listRv(t, ns);
  return withUA({
    ...s,
    path: s.path.replace('{rvbig}', String(BigInt(rv) + 1_000_000n)).replace('{rv}', rv),
  });
}

const metaName = (e: WatchEvent) => (e.object.metadata as { name?: string } | undefined)?.name;
const initialEnd = (e: WatchEvent) =>
  (e.object.metadata as { annotations?: Record<string, string> } | undefined)?.annotations?.[
    'k8s.io/initial-events-end'
  ] === 'true';

async function runWatch(t: Target, ns: string, c: WatchCase): Promise<unknown> {
  const w = await watch(t, await resolve(t, ns, c.req));
  try {
    if (w.status !== 200) {
      await w.until(() => false, 5_000);
      const a: Answer = { status: w.status, contentType: w.contentType, headers: {}, body: w.body() };
      return { status: w.status, contentType: w.contentType, body: normalise(decode(a)) };
    }
    for (const act of c.actions) {
      const r = await send(t, withUA(act));
      if (r.status >= 300) throw new Error(`${t.name}: ${act.method} ${act.path}: ${r.status} ${r.body}`);
    }
    const reached = await w.until(c.done, 30_000);
    return {
      status: w.status,
      contentType: w.contentType,
      reached,
      // periodic bookmarks come at each server's own pace (about a minute in kube): only the one that ends
      // the initial events is part of the sequence
      events: w.events
        .filter((e) => e.type !== 'BOOKMARK' || initialEnd(e))
        .map((e) =>
          e.type === 'BOOKMARK'
            ? { type: e.type, object: normalise(e.object) }
            : e.type === 'ERROR'
              ? { type: e.type, object: normalise(e.object) }
              : { type: e.type, name: metaName(e), object: normalise(e.object) },
        ),
    };
  } finally {
    w.close();
  }
}

async function runPages(t: Target, ns: string, c: Case & { type: 'pages' }): Promise<unknown> {
  const pages: unknown[] = [];
  let next = c.req.path;
  for (let i = 0; i < 10; i++) {
    const a = await send(t, await resolve(t, ns, { ...c.req, path: next }));
    const json = decode(a) as { metadata?: { continue?: string } };
    pages.push(normalise(defaultView(a, json)));
    const cont = json?.metadata?.continue;
    if (!cont) break;
    next = `${c.req.path}&continue=${encodeURIComponent(cont)}`;
  }
  return pages;
}

export async function run(t: Target, ctx: Ctx, c: Case): Promise<unknown> {
  if (c.type === 'watch') return runWatch(t, ctx.ns, c);
  if (c.type === 'pages') return runPages(t, ctx.ns, c);
  const a = await send(t, await resolve(t, ctx.ns, c.req));
  const json = decode(a);
  return normalise((c.view ?? defaultView)(a, json, ctx));
}

/**
 * The check's namespace on both sides, holding the same objects: created on each, then what the real
 * member's controllers publish into every new namespace (the default service account, kube-root-ca.crt)
 * copied into the simulated one as their controller wrote them, since the simulator runs no such controllers.
 * Returns the context the catalogue is generated from, and the resources only one side serves.
 */
export async function prepare(
  simT: Target,
  realT: Target,
  ns: string,
  id: string,
  wait: <T>(what: string, f: () => Promise<T | undefined>) => Promise<T>,
): Promise<{ ctx: Ctx; onlyReal: string[]; onlySim: string[] }> {
  const nsBody = JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const t of [simT, realT]) {
    const a = await send(t, {
      method: 'POST',
      path: '/api/v1/namespaces',
      headers: { 'content-type': 'application/json', 'user-agent': UA },
      body: nsBody,
    });
    if (a.status !== 201) throw new Error(`${t.name}: create namespace: ${a.status} ${a.body}`);
  }
  for (const [resource, name] of [
    ['serviceaccounts', 'default'],
    ['configmaps', 'kube-root-ca.crt'],
  ] as const) {
    const obj = await wait(`${realT.name} ${resource}/${name} in ${ns}`, async () => {
      const a = await send(realT, get(`/api/v1/namespaces/${ns}/${resource}/${name}`));
      return a.status === 200 ? (JSON.parse(a.body.toString()) as Record<string, any>) : undefined;
    });
    if (realT.name === 'sim') continue;
    const manager = obj.metadata.managedFields?.[0]?.manager ?? 'kube-controller-manager';
    const { uid, resourceVersion, creationTimestamp, managedFields, ...meta } = obj.metadata;
    const a = await send(simT, {
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/${resource}?fieldManager=${manager}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...obj, metadata: meta }),
    });
    if (a.status !== 201) throw new Error(`sim: copy ${resource}/${name}: ${a.status} ${a.body}`);
  }

  const [simKinds, realKinds] = [await served(simT), await served(realT)];
  const onlyReal = [...realKinds.keys()].filter((k) => !simKinds.has(k));
  const onlySim = [...simKinds.keys()].filter((k) => !realKinds.has(k));
  const common = [...realKinds.entries()].filter(([k]) => simKinds.has(k));
  const ctx: Ctx = {
    ns,
    id,
    kinds: common.map(([, k]) => k).filter((k) => k.verbs.includes('list') && !k.resource.includes('/')),
    common: {
      resources: new Set(common.map(([k]) => k)),
      groups: new Set(common.map(([, k]) => k.group)),
      versions: new Set(common.map(([, k]) => (k.group ? `${k.group}/${k.version}` : k.version))),
    },
  };
  return { ctx, onlyReal, onlySim };
}

/** Every case (the seeds first), sent to the simulated side then the real one: the differences found. */
export async function check(
  simT: Target,
  realT: Target,
  ctx: Ctx,
): Promise<{ cases: number; found: string[] }> {
  const seeds: Case[] = seed(ctx).map((s) => ({
    type: 'request',
    name: `POST ${s.path} (seed ${(s.object.metadata as { name: string }).name})`,
    req: {
      method: 'POST',
      path: s.path,
      headers: { accept: JSON_ACCEPT, 'content-type': 'application/json' },
      body: JSON.stringify(s.object),
    },
  }));
  const cases = [...seeds, ...catalogue(ctx)];
  const names = new Set<string>();
  for (const c of cases) {
    if (names.has(c.name)) throw new Error(`two cases named ${c.name}`);
    names.add(c.name);
  }
  const found: string[] = [];
  for (const c of cases) {
    const s = await run(simT, ctx, c).catch((e) => ({ failed: String(e) }));
    const r = await run(realT, ctx, c).catch((e) => ({ failed: String(e) }));
    const [ss, rs] = [statusOf(s), statusOf(r)];
    // answers of different codes differ everywhere: one line with what each said is the readable report
    if (ss && rs && ss.code !== rs.code)
      found.push(`${c.name}: status: sim said ${ss.said}, real said ${rs.said}`);
    else for (const d of differences(s, r)) found.push(`${c.name}: ${d}`);
  }
  return { cases: cases.length, found };
}

function statusOf(v: unknown): { code: number; said: string } | undefined {
  const a = v as { status?: unknown; body?: { kind?: string; reason?: string; message?: string } };
  if (!a || typeof a !== 'object' || typeof a.status !== 'number') return undefined;
  const b = a.body;
  const what = b?.kind === 'Status' ? `${b.reason}: ${String(b.message).slice(0, 200)}` : (b?.kind ?? '');
  return { code: a.status, said: `${a.status} ${what}`.trim() };
}
