/**
 * The differential check's catalogue: the requests sent to a simulated member and a real one, generated as
 * kinds × verbs × selectors × formats over the objects `seed` creates in the check's own namespace. Each case
 * has a readable name ("GET /api/v1/namespaces/…?labelSelector=app%3Da [Table]") and says what of the answer
 * is compared (`view`); runs are in catalogue order, so mutations happen in the same order on both sides.
 */
import type { Answer, Sent, WatchEvent } from './client.ts';

export interface Kind {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

export interface Ctx {
  ns: string;
  /** the value of the `diff` label on every seeded object */
  id: string;
  /** the list-able kinds both servers serve */
  kinds: Kind[];
  /** group/version/resource keys both serve, and group names both serve (discovery is compared on these) */
  common: { resources: Set<string>; groups: Set<string>; versions: Set<string> };
}

/** what is compared of one answer; `json` is the decoded body (JSON, YAML, or protobuf through the sim's codec) */
export type View = (a: Answer, json: unknown, ctx: Ctx) => unknown;

export interface RequestCase {
  type: 'request';
  name: string;
  /** `{rv}` in the path is the side's current configmap list RV, `{rvbig}` one far past it */
  req: Sent;
  view?: View;
}

export interface PagesCase {
  type: 'pages';
  name: string;
  req: Sent;
}

export interface WatchCase {
  type: 'watch';
  name: string;
  req: Sent;
  /** sent on the same side once its watch is open */
  actions: Sent[];
  /** read events until this holds (both sides must reach it) */
  done: (events: WatchEvent[]) => boolean;
}

export type Case = RequestCase | PagesCase | WatchCase;

export const JSON_ACCEPT = 'application/json';
export const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
export const METADATA_LIST =
  'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json';
export const METADATA = 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json';
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
export const AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

const FORMATS: Array<[string, string]> = [
  ['JSON', JSON_ACCEPT],
  ['Table', TABLE],
  ['metadata', METADATA_LIST],
  ['protobuf', `${PROTOBUF},application/json`],
];

export function basePath(k: Kind, ns?: string): string {
  const gv = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  return k.namespaced && ns ? `${gv}/namespaces/${ns}/${k.resource}` : `${gv}/${k.resource}`;
}

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

function get(path: string, accept = JSON_ACCEPT, view?: View): RequestCase {
  const fmt = FORMATS.find(([, a]) => a === accept)?.[0] ?? accept;
  return {
    type: 'request',
    name: `GET ${path} [${fmt}]`,
    req: { method: 'GET', path, headers: { accept } },
    view,
  };
}

function write(
  method: string,
  path: string,
  body: unknown,
  contentType = 'application/json',
  label = '',
): RequestCase {
  return {
    type: 'request',
    name: `${method} ${path}${label ? ` (${label})` : ''}`,
    req: {
      method,
      path,
      headers: { accept: JSON_ACCEPT, 'content-type': contentType },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    },
  };
}

/** The objects both servers hold before the catalogue runs (in the check's namespace). */
export function seed(ctx: Ctx): Array<{ path: string; object: Record<string, unknown> }> {
  const cm = (name: string, labels: Record<string, string>, data: Record<string, string>) => ({
    path: `/api/v1/namespaces/${ctx.ns}/configmaps`,
    object: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { diff: ctx.id, ...labels } },
      data,
    },
  });
  return [
    cm('a', { app: 'a', tier: 'front', num: '1' }, { k: 'a' }),
    cm('b', { app: 'b', tier: 'back', num: '2' }, { k: 'b', other: 'x' }),
    cm('c', { app: 'c', 'example.com/role': 'x' }, {}),
    cm('d', { tier: 'front' }, { k: 'd' }),
    ...['s-a', 's-b'].map((name, i) => ({
      path: `/api/v1/namespaces/${ctx.ns}/secrets`,
      object: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, labels: { diff: ctx.id, app: i ? 'b' : 'a' } },
        type: i ? 'kubernetes.io/basic-auth' : 'Opaque',
        ...(i ? { stringData: { username: 'u', password: 'p' } } : { data: { k: 'dg==' } }),
      },
    })),
    {
      path: `/api/v1/namespaces/${ctx.ns}/services`,
      object: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'svc-a', labels: { diff: ctx.id, app: 'a' } },
        spec: { selector: { app: 'a' }, ports: [{ port: 80, protocol: 'TCP' }] },
      },
    },
    {
      path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${ctx.ns}/roles`,
      object: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'reader', labels: { diff: ctx.id } },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
      },
    },
  ];
}

const LABEL_SELECTORS = [
  'app=a',
  'app==a',
  'app!=a',
  'app in (a,b)',
  'app notin (a,b)',
  'app',
  '!app',
  'tier=front,app=a',
  'app=a,app=b',
  'example.com/role=x',
  'num>1',
  'num<2',
  'app in ()',
  '=a',
  'app in a',
  'a b',
  'app=a b',
  'num>x',
  'Bad_Key!=1',
];

const FIELD_SELECTORS = (ns: string) => [
  'metadata.name=a',
  'metadata.name==a',
  'metadata.name!=a',
  `metadata.namespace=${ns}`,
  `metadata.name=a,metadata.namespace=${ns}`,
  'metadata.namespace!=x',
  'data.k=a',
  'metadata.name',
  'metadata.name=a,',
];

/** an APIGroup with only the versions both sides serve */
function servedVersions<G extends { name: string; versions?: Array<{ groupVersion: string }> }>(
  g: G,
  ctx: Ctx,
): G {
  return { ...g, versions: g.versions?.filter((v) => ctx.common.versions.has(v.groupVersion)) };
}

/** discovery views: only what both serve is compared (what only the real one serves is printed as skipped) */
const discoveryView: Record<string, View> = {
  groupList: (_a, json, ctx) =>
    (json as { groups?: Array<{ name: string }> }).groups
      ?.filter((g) => ctx.common.groups.has(g.name))
      .map((g) => servedVersions(g, ctx)),
  group: (a, json, ctx) => ({ status: a.status, body: servedVersions(json as { name: string }, ctx) }),
  resourceList: (a, json, ctx) => {
    const l = json as { groupVersion?: string; resources?: Array<{ name: string }> };
    return {
      status: a.status,
      groupVersion: l.groupVersion,
      resources: l.resources?.filter((r) => ctx.common.resources.has(`${l.groupVersion}/${r.name}`)),
    };
  },
  aggregated: (_a, json, ctx) =>
    (
      json as {
        items?: Array<{
          metadata: { name?: string };
          versions: Array<{
            version: string;
            resources: Array<{ resource: string; subresources?: Array<{ subresource: string }> }>;
          }>;
        }>;
      }
    ).items
      ?.filter((g) => ctx.common.groups.has(g.metadata.name ?? ''))
      .map((g) => {
        const gv = (v: string) => (g.metadata.name ? `${g.metadata.name}/${v}` : v);
        return {
          ...g,
          versions: g.versions
            .filter((v) => ctx.common.versions.has(gv(v.version)))
            .map((v) => ({
              ...v,
              resources: v.resources
                .filter((r) => ctx.common.resources.has(`${gv(v.version)}/${r.resource}`))
                .map((r) => ({
                  ...r,
                  subresources: r.subresources?.filter((sr) =>
                    ctx.common.resources.has(`${gv(v.version)}/${r.resource}/${sr.subresource}`),
                  ),
                })),
            })),
        };
      }),
  keys: (a, json) => ({ status: a.status, keys: Object.keys((json ?? {}) as object).sort() }),
  statusOnly: (a) => ({ status: a.status, contentType: a.contentType }),
};

export function catalogue(ctx: Ctx): Case[] {
  const { ns, id } = ctx;
  const cases: Case[] = [];
  const cms = `/api/v1/namespaces/${ns}/configmaps`;

  // discovery
  cases.push(get('/version', JSON_ACCEPT, discoveryView.keys));
  cases.push(get('/api'), get('/apis', JSON_ACCEPT, discoveryView.groupList));
  cases.push(
    get('/api', AGGREGATED, discoveryView.aggregated),
    get('/apis', AGGREGATED, discoveryView.aggregated),
  );
  const gvs = new Set<string>();
  for (const r of ctx.common.resources) gvs.add(r.slice(0, r.lastIndexOf('/')));
  for (const gv of [...gvs].sort()) {
    cases.push(get(gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`, JSON_ACCEPT, discoveryView.resourceList));
  }
  for (const g of [...ctx.common.groups].filter(Boolean).sort())
    cases.push(get(`/apis/${g}`, JSON_ACCEPT, discoveryView.group));
  for (const p of ['/healthz', '/livez', '/readyz', '/openapi/v3'])
    cases.push(get(p, JSON_ACCEPT, discoveryView.statusOnly));
  cases.push(get('/apis/nosuch.example.com/v1'), get('/nosuch'), get('/api/v9'));

  // every kind both serve: list (JSON, Table, metadata, protobuf) and a missing object
  for (const k of ctx.kinds) {
    const path = basePath(k, ns);
    const sel = k.namespaced ? '' : `?${q({ labelSelector: `diff=${id}` })}`;
    for (const [, accept] of FORMATS) cases.push(get(`${path}${sel}`, accept));
    if (k.verbs.includes('get')) cases.push(get(`${path}/nope-${id}`), get(`${path}/nope-${id}`, TABLE));
  }

  // selectors and formats on the seeded kinds
  const seeded = ['configmaps', 'secrets'].map((r) => `/api/v1/namespaces/${ns}/${r}`);
  for (const path of seeded) {
    for (const s of LABEL_SELECTORS) {
      cases.push(get(`${path}?${q({ labelSelector: s })}`));
      cases.push(get(`${path}?${q({ labelSelector: s })}`, TABLE));
    }
    for (const s of FIELD_SELECTORS(ns)) cases.push(get(`${path}?${q({ fieldSelector: s })}`));
    cases.push(get(`${path}?${q({ labelSelector: 'app', fieldSelector: 'metadata.name!=a' })}`));
  }
  cases.push(get(`/api/v1/namespaces/${ns}/secrets?${q({ fieldSelector: 'type=Opaque' })}`));
  cases.push(get(`/api/v1/namespaces/${ns}/services?${q({ fieldSelector: 'spec.clusterIP=None' })}`));
  cases.push(get(`/api/v1/configmaps?${q({ labelSelector: `diff=${id}` })}`));
  cases.push(get(`/api/v1/configmaps?${q({ labelSelector: `diff=${id}` })}`, TABLE));
  cases.push(
    get(`/api/v1/configmaps?${q({ fieldSelector: `metadata.namespace=${ns}`, labelSelector: 'app' })}`),
  );

  // single objects in every format
  for (const [path, name] of [
    [cms, 'a'],
    [`/api/v1/namespaces/${ns}/secrets`, 's-b'],
    [`/api/v1/namespaces/${ns}/services`, 'svc-a'],
    [`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, 'reader'],
  ] as const) {
    for (const accept of [JSON_ACCEPT, TABLE, METADATA, PROTOBUF, 'application/yaml', 'application/xml'])
      cases.push(get(`${path}/${name}`, accept));
    cases.push(get(`${path}/${name}?${q({ resourceVersion: '0' })}`));
  }
  cases.push(get(`/api/v1/namespaces/${ns}`), get(`/api/v1/namespaces/${ns}`, TABLE));
  for (const io of ['None', 'Metadata', 'Object', 'Bogus'])
    cases.push(get(`${cms}?${q({ labelSelector: `diff=${id}`, includeObject: io })}`, TABLE));

  // paging
  for (const limit of ['1', '2', '3', '10']) {
    cases.push({
      type: 'pages',
      name: `GET ${cms}?labelSelector=diff=…&limit=${limit} (every page)`,
      req: {
        method: 'GET',
        path: `${cms}?${q({ labelSelector: `diff=${id}`, limit })}`,
        headers: { accept: JSON_ACCEPT },
      },
    });
  }
  cases.push({
    type: 'pages',
    name: `GET ${cms}?limit=1 [Table] (every page)`,
    req: {
      method: 'GET',
      path: `${cms}?${q({ labelSelector: `diff=${id}`, limit: '1' })}`,
      headers: { accept: TABLE },
    },
  });
  const paging: Array<Record<string, string>> = [
    { limit: '0' },
    { limit: '-1' },
    { limit: 'x' },
    { continue: 'bogus' },
    { limit: '1', continue: 'e30=' },
  ];
  for (const p of paging) cases.push(get(`${cms}?${q(p)}`));

  // resource version semantics on lists
  const rvs: Array<Record<string, string>> = [
    { resourceVersion: '0' },
    { resourceVersion: '0', limit: '1' },
    { resourceVersion: '{rv}' },
    { resourceVersion: '{rv}', resourceVersionMatch: 'NotOlderThan' },
    { resourceVersion: '{rv}', resourceVersionMatch: 'Exact' },
    { resourceVersion: '{rv}', resourceVersionMatch: 'Exact', limit: '1' },
    { resourceVersionMatch: 'NotOlderThan' },
    { resourceVersion: '{rv}', resourceVersionMatch: 'Bogus' },
    { resourceVersion: 'abc' },
    { resourceVersion: '{rvbig}' },
    { resourceVersion: '{rv}', limit: '1', continue: 'bogus' },
    { sendInitialEvents: 'true' },
    { resourceVersion: '{rv}', resourceVersionMatch: 'NotOlderThan', continue: 'bogus' },
  ];
  for (const p of rvs) {
    const path = `${cms}?${q({ labelSelector: `diff=${id}`, ...p })
      .replace(/%7B/g, '{')
      .replace(/%7D/g, '}')}`;
    cases.push(get(path));
  }

  // writes and their errors
  const cmBody = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { diff: `${id}-w` } },
    data: { k: 'v' },
    ...extra,
  });
  cases.push(
    write('POST', cms, cmBody('w-created'), 'application/json', 'create'),
    write('POST', cms, cmBody('w-created'), 'application/json', 'already exists'),
    write('POST', cms, cmBody('Bad_Name'), 'application/json', 'invalid name'),
    write('POST', cms, { ...cmBody('w-kind'), kind: 'Secret' }, 'application/json', 'kind mismatch'),
    write('POST', cms, '{"apiVersion":"v1",', 'application/json', 'malformed JSON'),
    write('POST', cms, '', 'application/json', 'empty body'),
    write(
      'POST',
      cms,
      cmBody('w-ns', { metadata: { name: 'w-ns', namespace: 'other' } }),
      'application/json',
      'namespace mismatch',
    ),
    write(
      'POST',
      `/api/v1/namespaces/nosuch-${id}/configmaps`,
      cmBody('w-x'),
      'application/json',
      'namespace missing',
    ),
    write('POST', cms, cmBody('w-text'), 'text/plain', 'unsupported content type'),
    write('POST', cms, { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }, 'application/json', 'no name'),
    write(
      'POST',
      cms,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'w-gen-' } },
      'application/json',
      'generateName',
    ),
    write(
      'POST',
      cms,
      cmBody('w-data', { data: { 'bad key': 'v' } }),
      'application/json',
      'invalid data key',
    ),
    write(
      'PUT',
      `${cms}/w-created`,
      cmBody('w-created', { metadata: { name: 'w-created', resourceVersion: '1' } }),
      'application/json',
      'stale resourceVersion',
    ),
    write('PUT', `${cms}/w-created`, cmBody('w-other'), 'application/json', 'name mismatch'),
    write('PUT', `${cms}/w-put-new`, cmBody('w-put-new'), 'application/json', 'update missing'),
    write('PUT', cms, cmBody('w-created'), 'application/json', 'PUT on the collection'),
    write(
      'PATCH',
      `${cms}/w-created`,
      { data: { k: 'merged' } },
      'application/merge-patch+json',
      'merge patch',
    ),
    write(
      'PATCH',
      `${cms}/w-created`,
      { data: { k2: 'sm' } },
      'application/strategic-merge-patch+json',
      'strategic merge patch',
    ),
    write(
      'PATCH',
      `${cms}/w-created`,
      [{ op: 'add', path: '/data/k3', value: 'j' }],
      'application/json-patch+json',
      'JSON patch',
    ),
    write(
      'PATCH',
      `${cms}/w-created`,
      [{ op: 'test', path: '/data/k', value: 'nope' }],
      'application/json-patch+json',
      'JSON patch test fails',
    ),
    write(
      'PATCH',
      `${cms}/w-created`,
      [{ op: 'replace', path: '/data/missing', value: 'x' }],
      'application/json-patch+json',
      'JSON patch on a missing path',
    ),
    write('PATCH', `${cms}/w-created`, '{"data":', 'application/merge-patch+json', 'malformed merge patch'),
    write(
      'PATCH',
      `${cms}/w-created`,
      { data: { k: 'x' } },
      'application/json',
      'patch with a plain JSON content type',
    ),
    write(
      'PATCH',
      `${cms}/nope-${id}`,
      { data: { k: 'x' } },
      'application/merge-patch+json',
      'patch missing',
    ),
    write(
      'PATCH',
      `${cms}/w-created`,
      { metadata: { name: 'renamed' } },
      'application/merge-patch+json',
      'patch renames',
    ),
    get(`${cms}/w-created`),
    write(
      'DELETE',
      `${cms}/w-created`,
      {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        preconditions: { uid: '00000000-0000-0000-0000-000000000000' },
      },
      'application/json',
      'uid precondition fails',
    ),
    write(
      'DELETE',
      `${cms}/w-created`,
      { apiVersion: 'v1', kind: 'DeleteOptions', dryRun: ['All'] },
      'application/json',
      'dry run',
    ),
    write(
      'DELETE',
      `${cms}/w-created`,
      { apiVersion: 'v1', kind: 'DeleteOptions', dryRun: ['Bogus'] },
      'application/json',
      'bad dry run',
    ),
    write('DELETE', `${cms}/w-created`, '', 'application/json', 'delete'),
    write('DELETE', `${cms}/w-created`, '', 'application/json', 'delete missing'),
    write('POST', `${cms}?dryRun=All`, cmBody('w-dry'), 'application/json', 'dry-run create'),
    get(`${cms}/w-dry`),
    write(
      'POST',
      `/api/v1/namespaces/${ns}/secrets`,
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'w-bad-b64' }, data: { k: '***' } },
      'application/json',
      'data not base64',
    ),
    write(
      'POST',
      `/api/v1/namespaces/${ns}/services`,
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'w-svc' }, spec: { ports: [{ port: 70000 }] } },
      'application/json',
      'port out of range',
    ),
  );

  // server-side apply
  const applied = (v: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'w-ssa' },
      data: { k: v },
      ...extra,
    });
  const apply = (params: Record<string, string>, body: string, label: string): RequestCase =>
    write(
      'PATCH',
      `${cms}/w-ssa${Object.keys(params).length ? `?${q(params)}` : ''}`,
      body,
      'application/apply-patch+yaml',
      label,
    );
  cases.push(
    apply({ fieldManager: 'alice' }, applied('one'), 'apply creates'),
    apply({ fieldManager: 'alice' }, applied('one'), 'apply again, no change'),
    apply({ fieldManager: 'bob' }, applied('two'), 'conflict'),
    apply({ fieldManager: 'bob' }, applied('one'), 'same value, shared'),
    apply({ fieldManager: 'carol' }, applied('three'), 'conflict with two managers'),
    apply({ fieldManager: 'carol', force: 'true' }, applied('three'), 'forced'),
    apply({}, applied('x'), 'no fieldManager'),
    apply({ fieldManager: 'alice' }, '[1,2]', 'not an object'),
    apply({ fieldManager: 'alice' }, 'data: [', 'malformed YAML'),
    apply(
      { fieldManager: 'alice' },
      JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'w-ssa' } }),
      'no apiVersion',
    ),
    apply({ fieldManager: 'alice' }, applied('y', { metadata: { name: 'other' } }), 'name mismatch'),
    apply({ fieldManager: 'alice', force: 'maybe' }, applied('y'), 'bad force'),
    get(`${cms}/w-ssa`),
  );

  // field validation
  const unknown = (name: string) => JSON.stringify({ ...cmBody(name), spec: { x: 1 }, bogus: true });
  for (const fv of ['Strict', 'Warn', 'Ignore', '', 'Bogus']) {
    const p = fv ? `?${q({ fieldValidation: fv })}` : '';
    const n = `w-fv-${fv.toLowerCase() || 'default'}`;
    cases.push(
      write(
        'POST',
        `${cms}${p}`,
        unknown(n),
        'application/json',
        `unknown fields, fieldValidation=${fv || 'unset'}`,
      ),
    );
    cases.push(
      write(
        'POST',
        `${cms}${p}`,
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${n}-dup"},"data":{"k":"a","k":"b"}}`,
        'application/json',
        `duplicate field, fieldValidation=${fv || 'unset'}`,
      ),
    );
    cases.push(
      write(
        'PATCH',
        `${cms}/a${p}`,
        { bogus: 1, data: { k: 'a' } },
        'application/merge-patch+json',
        `merge patch with an unknown field, fieldValidation=${fv || 'unset'}`,
      ),
    );
    cases.push(
      write(
        'PATCH',
        `${cms}/w-ssa${p ? `${p}&` : '?'}fieldManager=carol`,
        applied('three', { bogus: 1 }),
        'application/apply-patch+yaml',
        `apply with an unknown field, fieldValidation=${fv || 'unset'}`,
      ),
    );
  }

  // watches
  const w = (
    name: string,
    params: Record<string, string>,
    actions: Sent[],
    done: WatchCase['done'],
  ): WatchCase => ({
    type: 'watch',
    name: `WATCH ${cms}?${q(params)} (${name})`,
    req: {
      method: 'GET',
      path: `${cms}?${q({ watch: 'true', ...params }).replace(/%7Brv%7D/g, '{rv}')}`,
      headers: { accept: JSON_ACCEPT },
    },
    actions,
    done,
  });
  const act = (method: string, path: string, body: unknown, ct = 'application/json'): Sent => ({
    method,
    path,
    headers: { accept: JSON_ACCEPT, 'content-type': ct },
    body: JSON.stringify(body),
  });
  const deleted = (name: string) => (ev: WatchEvent[]) =>
    ev.some((e) => e.type === 'DELETED' && (e.object.metadata as { name?: string })?.name === name);
  const endBookmark = (ev: WatchEvent[]) =>
    ev.some(
      (e) =>
        e.type === 'BOOKMARK' &&
        (e.object.metadata as { annotations?: Record<string, string> })?.annotations?.[
          'k8s.io/initial-events-end'
        ] === 'true',
    );
  cases.push(
    w(
      'create, update, delete',
      { labelSelector: `diff=${id}-w1`, resourceVersion: '{rv}' },
      [
        act('POST', cms, { ...cmBody('w1'), metadata: { name: 'w1', labels: { diff: `${id}-w1` } } }),
        act('PATCH', `${cms}/w1`, { data: { k: 'changed' } }, 'application/merge-patch+json'),
        act('DELETE', `${cms}/w1`, { apiVersion: 'v1', kind: 'DeleteOptions' }),
      ],
      deleted('w1'),
    ),
    w(
      'label moves in and out of the selector',
      { labelSelector: 'moved=in', resourceVersion: '{rv}' },
      [
        act('POST', cms, { ...cmBody('w2'), metadata: { name: 'w2', labels: { moved: 'out' } } }),
        act('PATCH', `${cms}/w2`, { metadata: { labels: { moved: 'in' } } }, 'application/merge-patch+json'),
        act('PATCH', `${cms}/w2`, { data: { k: 'still in' } }, 'application/merge-patch+json'),
        act(
          'PATCH',
          `${cms}/w2`,
          { metadata: { labels: { moved: 'gone' } } },
          'application/merge-patch+json',
        ),
        act('DELETE', `${cms}/w2`, { apiVersion: 'v1', kind: 'DeleteOptions' }),
        act('POST', cms, { ...cmBody('w2-end'), metadata: { name: 'w2-end', labels: { moved: 'in' } } }),
        act('DELETE', `${cms}/w2-end`, { apiVersion: 'v1', kind: 'DeleteOptions' }),
      ],
      deleted('w2-end'),
    ),
    w(
      'field selector',
      { fieldSelector: 'metadata.name=w3', resourceVersion: '{rv}' },
      [
        act('POST', cms, cmBody('w3-not')),
        act('POST', cms, cmBody('w3')),
        act('DELETE', `${cms}/w3-not`, { apiVersion: 'v1', kind: 'DeleteOptions' }),
        act('DELETE', `${cms}/w3`, { apiVersion: 'v1', kind: 'DeleteOptions' }),
      ],
      deleted('w3'),
    ),
    w(
      'initial events from resourceVersion 0',
      { labelSelector: `diff=${id}`, resourceVersion: '0' },
      [],
      (ev) => ev.length >= 4,
    ),
    w('initial events without resourceVersion', { labelSelector: `diff=${id}` }, [], (ev) => ev.length >= 4),
    w(
      'streaming list with bookmarks',
      {
        labelSelector: `diff=${id}`,
        sendInitialEvents: 'true',
        allowWatchBookmarks: 'true',
        resourceVersionMatch: 'NotOlderThan',
      },
      [],
      endBookmark,
    ),
    w(
      'streaming list with bookmarks, then a change',
      {
        labelSelector: `diff=${id}`,
        sendInitialEvents: 'true',
        allowWatchBookmarks: 'true',
        resourceVersionMatch: 'NotOlderThan',
        resourceVersion: '{rv}',
      },
      [act('PATCH', `${cms}/d`, { data: { k: 'watched' } }, 'application/merge-patch+json')],
      (ev) => endBookmark(ev) && ev.some((e) => e.type === 'MODIFIED'),
    ),
    w(
      'sendInitialEvents without resourceVersionMatch',
      { sendInitialEvents: 'true', allowWatchBookmarks: 'true' },
      [],
      () => true,
    ),
    w(
      'sendInitialEvents without bookmarks',
      { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' },
      [],
      () => true,
    ),
    w(
      'sendInitialEvents=false with NotOlderThan',
      { sendInitialEvents: 'false', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' },
      [],
      () => true,
    ),
    w(
      'resourceVersionMatch=Exact',
      { resourceVersion: '{rv}', resourceVersionMatch: 'Exact' },
      [],
      () => true,
    ),
    w('invalid label selector', { labelSelector: 'a b' }, [], () => true),
    w('invalid field selector', { fieldSelector: 'data.k=x' }, [], () => true),
    w('invalid resourceVersion', { resourceVersion: 'abc' }, [], () => true),
  );
  return cases;
}
