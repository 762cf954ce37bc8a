/**
 * A small RBAC for the simulated clusters, so tests can watch each cluster decide for the impersonated
 * user the way a real one does:
 *
 * - who: the bearer token's user (`tokens`), else the fleet's own trusted credential (a superuser in
 *   system:masters, as the demo token is); `Impersonate-User` / `-Group` switch to the impersonated user
 *   once the requester may impersonate (superusers may), adding system:authenticated as kube does;
 * - what: rules per user and per group (verbs, apiGroups, resources incl. `pods/log`, resourceNames, and,
 *   a simplification of Roles, `namespaces`: absent = everywhere incl. cluster scope);
 * - answers: 403 Forbidden Statuses in kube-apiserver's words, SubjectAccessReview (what the fleet asks
 *   before honouring `kubectl --as`), SelfSubjectAccessReview (`kubectl auth can-i`) and SelfSubjectReview
 *   (`kubectl auth whoami`).
 *
 * Without `rbac` a cluster allows everything (and answers every review with allowed), as before.
 * Non-resource paths (discovery, version, OpenAPI) are open to every user, like system:discovery.
 */

import { parse as parseYaml } from 'yaml';
import { BODY_TYPES, StatusError, unsupportedMediaType } from './http.ts';
import { parseMediaType } from './negotiate.ts';
import { parseResourcePath } from './paths.ts';
import { isProtobufBody, negotiatedAnswer, readProtobufRequest } from './protobuf.ts';
import { badRequest, forbidden, invalid, statusResponse } from './status.ts';

export interface SimRule {
  verbs: string[];
  /** default: every group */
  apiGroups?: string[];
  /** `pods`, `pods/log`, `*`; absent: non-resource rule only */
  resources?: string[];
  resourceNames?: string[];
  /** absent: every namespace and the cluster scope */
  namespaces?: string[];
  nonResourceURLs?: string[];
}

export interface SimRbac {
  users?: Record<string, SimRule[]>;
  groups?: Record<string, SimRule[]>;
  /** bearer tokens this cluster knows (anything else is the fleet's trusted credential) */
  tokens?: Record<string, { user: string; groups?: string[] }>;
}

export interface SimUser {
  user: string;
  groups: string[];
  uid?: string;
}

/** The identity the demo credential authenticates as: allowed everything, impersonation included. */
export const SIM_SUPERUSER: SimUser = {
  user: 'fleet-apiserver',
  groups: ['system:masters', 'system:authenticated'],
};

interface Attrs {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  name: string;
  namespace: string;
  path?: string;
}

function matches(list: string[] | undefined, v: string): boolean {
  return !!list && (list.includes('*') || list.includes(v));
}

function ruleAllows(r: SimRule, a: Attrs): boolean {
  if (!matches(r.verbs, a.verb)) return false;
  if (a.path !== undefined) return matches(r.nonResourceURLs, a.path);
  if (!r.resources) return false;
  if (!matches(r.apiGroups ?? ['*'], a.group)) return false;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (!matches(r.resources, res)) return false;
  if (r.resourceNames && !(a.name && r.resourceNames.includes(a.name))) return false;
  if (r.namespaces && !(a.namespace && r.namespaces.includes(a.namespace))) return false;
  return true;
}

/** The non-resource URLs kube's system:discovery and system:public-info-viewer roles grant everyone. */
const PUBLIC_PATHS =
  /^\/(api|apis|openapi)(\/.*)?$|^\/(healthz|livez|readyz|version)\/?$|^\/\.well-known\/openid-configuration\/?$|^\/openid\/v1\/jwks\/?$/;

export function rbacAllows(rbac: SimRbac | undefined, who: SimUser, a: Attrs): boolean {
  if (!rbac) return true;
  if (who.groups.includes('system:masters')) return true;
  // discovery and friends are open to everyone (system:discovery, system:public-info-viewer); /metrics
  // and other non-resource URLs are not
  if (a.path !== undefined && a.verb === 'get' && PUBLIC_PATHS.test(a.path)) return true;
  const rules = [...(rbac.users?.[who.user] ?? []), ...who.groups.flatMap((g) => rbac.groups?.[g] ?? [])];
  return rules.some((r) => ruleAllows(r, a));
}

/** Values of a header, one per line; Fetch joins repeated lines with ", " when read. */
function values(h: Headers, name: string): string[] {
  const v = h.get(name);
  return v === null
    ? []
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

type Who = { ok: true; who: SimUser; requester: SimUser } | { ok: false; res: Response };

/** The requester by credential, then the impersonated user if the requester may impersonate. */
export function whoIs(rbac: SimRbac | undefined, req: Request): Who {
  const auth = req.headers.get('authorization') ?? '';
  const token = /^bearer\s+(\S+)$/i.exec(auth)?.[1];
  const known = token ? rbac?.tokens?.[token] : undefined;
  const requester: SimUser = known
    ? { user: known.user, groups: [...(known.groups ?? []), 'system:authenticated'] }
    : SIM_SUPERUSER;
  const asUser = req.headers.get('impersonate-user');
  if (!asUser) return { ok: true, who: requester, requester };
  const groups = values(req.headers, 'impersonate-group');
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(asUser);
  const checks: Array<{ resource: string; name: string; namespace: string }> = [
    sa
      ? { resource: 'serviceaccounts', name: sa[2]!, namespace: sa[1]! }
      : { resource: 'users', name: asUser, namespace: '' },
    ...groups.map((g) => ({ resource: 'groups', name: g, namespace: '' })),
  ];
  for (const c of checks) {
    const a: Attrs = { verb: 'impersonate', group: '', subresource: '', ...c };
    if (!rbacAllows(rbac, requester, a))
      return {
        ok: false,
        res: statusResponse(
          forbidden({
            user: requester.user,
            verb: 'impersonate',
            resource: c.resource,
            apiGroup: '',
            name: c.name,
            ...(c.namespace ? { namespace: c.namespace } : {}),
          }),
        ),
      };
  }
  const all = [...groups];
  if (asUser === 'system:anonymous') {
    if (!all.includes('system:unauthenticated')) all.push('system:unauthenticated');
  } else if (!all.includes('system:authenticated') && !all.includes('system:unauthenticated'))
    all.push('system:authenticated');
  const who: SimUser = { user: asUser, groups: all };
  const uid = req.headers.get('impersonate-uid');
  if (uid) who.uid = uid;
  return { ok: true, who, requester };
}

const AUTHZ = '/apis/authorization.k8s.io/v1/';
const SAR = `${AUTHZ}subjectaccessreviews`;
const SSAR = `${AUTHZ}selfsubjectaccessreviews`;
const SSRR = `${AUTHZ}selfsubjectrulesreviews`;
const SSR = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

function attrsFromSpec(spec: any): Attrs | undefined {
  const r = spec?.resourceAttributes;
  if (r && typeof r === 'object')
    return {
      verb: String(r.verb ?? ''),
      group: String(r.group ?? ''),
      resource: String(r.resource ?? ''),
      subresource: String(r.subresource ?? ''),
      name: String(r.name ?? ''),
      namespace: String(r.namespace ?? ''),
    };
  const n = spec?.nonResourceAttributes;
  if (n && typeof n === 'object')
    return {
      verb: String(n.verb ?? ''),
      group: '',
      resource: '',
      subresource: '',
      name: '',
      namespace: '',
      path: String(n.path ?? ''),
    };
  return undefined;
}

/**
 * A review's request body: protobuf (what kubectl auth can-i and every client-go program send), JSON or
 * YAML; anything else a 415. Decoding errors are kube's 400s (StatusError, answered by the cluster).
 */
async function reviewBody(req: Request, group: string, kind: string): Promise<any> {
  if (isProtobufBody(req)) return readProtobufRequest(req, `${group}/v1`, kind);
  const mt = parseMediaType(req.headers.get('content-type') || 'application/json');
  const type = `${mt.type}/${mt.subtype}`;
  if (type !== 'application/json' && type !== 'application/yaml' && type !== '*/*')
    throw new StatusError(unsupportedMediaType(BODY_TYPES));
  const text = await req.text();
  try {
    return type === 'application/yaml' ? parseYaml(text) : JSON.parse(text);
  } catch (e) {
    throw new StatusError(badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`));
  }
}

/** The review answered: the request's spec echoed, the decision in status, 201 as kube's create returns. */
function reviewAnswer(req: Request, group: string, kind: string, spec: unknown, status: unknown): Response {
  const answer = {
    kind,
    apiVersion: `${group}/v1`,
    metadata: { creationTimestamp: null },
    spec,
    status,
  };
  return negotiatedAnswer(req.headers.get('accept'), answer, 201);
}

async function review(
  req: Request,
  rbac: SimRbac | undefined,
  who: SimUser | undefined,
  kind: string,
): Promise<Response> {
  const body = await reviewBody(req, 'authorization.k8s.io', kind);
  const a = attrsFromSpec(body?.spec);
  if (!a)
    throw new StatusError(
      invalid(kind, 'authorization.k8s.io', '', [
        {
          reason: 'FieldValueInvalid',
          message:
            'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
          field: 'spec.resourceAttributes',
        },
      ]),
    );
  const subject: SimUser = who ?? {
    user: String(body.spec.user ?? ''),
    groups: Array.isArray(body.spec.groups) ? body.spec.groups.map(String) : [],
  };
  const allowed = rbacAllows(rbac, subject, a);
  return reviewAnswer(
    req,
    'authorization.k8s.io',
    kind,
    body.spec,
    allowed ? { allowed: true, reason: "allowed by the simulated cluster's RBAC" } : { allowed: false },
  );
}

/** What every authenticated user may do (kube's system:basic-user and system:public-info-viewer). */
const BASIC_RULES = {
  resourceRules: [
    {
      verbs: ['create'],
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    },
    { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
  ],
  nonResourceRules: [
    {
      verbs: ['get'],
      nonResourceURLs: [
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
        '/healthz',
        '/livez',
        '/openapi',
        '/openapi/*',
        '/readyz',
        '/version',
        '/version/',
      ],
    },
  ],
};

/**
 * SelfSubjectRulesReview (`kubectl auth can-i --list`): the rules that apply to the user in spec.namespace,
 * in RBAC's shapes. A superuser has cluster-admin's stars.
 */
async function rulesReview(req: Request, rbac: SimRbac | undefined, who: SimUser): Promise<Response> {
  const body = await reviewBody(req, 'authorization.k8s.io', 'SelfSubjectRulesReview');
  const ns = String(body?.spec?.namespace ?? '');
  const status = {
    resourceRules: [...BASIC_RULES.resourceRules] as Record<string, unknown>[],
    nonResourceRules: [...BASIC_RULES.nonResourceRules] as Record<string, unknown>[],
    incomplete: false,
  };
  if (!rbac || who.groups.includes('system:masters')) {
    status.resourceRules.unshift({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] });
    status.nonResourceRules.unshift({ verbs: ['*'], nonResourceURLs: ['*'] });
  } else {
    const rules = [...(rbac.users?.[who.user] ?? []), ...who.groups.flatMap((g) => rbac.groups?.[g] ?? [])];
    for (const r of rules) {
      if (r.nonResourceURLs)
        status.nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
      if (!r.resources || (r.namespaces && !r.namespaces.includes(ns))) continue;
      status.resourceRules.push({
        verbs: r.verbs,
        apiGroups: r.apiGroups ?? ['*'],
        resources: r.resources,
        ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}),
      });
    }
  }
  return reviewAnswer(req, 'authorization.k8s.io', 'SelfSubjectRulesReview', body?.spec ?? {}, status);
}

/**
 * The RBAC hook of SimCluster.handle: a Response when this cluster refuses the request or answers it
 * itself (reviews, whoami); undefined to go on.
 */
export async function simAuthorize(
  rbac: SimRbac | undefined,
  req: Request,
  url: URL,
): Promise<Response | undefined> {
  const path = url.pathname;
  const isReview = req.method === 'POST' && (path === SAR || path === SSAR || path === SSRR || path === SSR);
  if (!rbac && !isReview) return undefined;
  const w = whoIs(rbac, req);
  if (!w.ok) return w.res;
  const info = parseResourcePath(path, req.method, url.searchParams);
  const a: Attrs = info
    ? {
        verb: info.verb,
        group: info.group,
        resource: info.resource,
        subresource: info.subresource ?? '',
        name: info.name ?? '',
        namespace: info.namespace ?? '',
      }
    : {
        verb: req.method.toLowerCase(),
        group: '',
        resource: '',
        subresource: '',
        name: '',
        namespace: '',
        path,
      };
  // SelfSubject* are open to every user, as kube's system:basic-user grants
  const self = path === SSAR || path === SSRR || path === SSR;
  if (!self && !rbacAllows(rbac, w.who, a))
    return statusResponse(
      forbidden(
        a.path !== undefined
          ? { user: w.who.user, verb: a.verb, path: a.path }
          : {
              user: w.who.user,
              verb: a.verb,
              resource: a.resource,
              apiGroup: a.group,
              ...(a.subresource ? { subresource: a.subresource } : {}),
              ...(a.namespace ? { namespace: a.namespace } : {}),
              ...(a.name ? { name: a.name } : {}),
            },
      ),
    );
  if (!isReview) return undefined;
  if (path === SSR)
    return negotiatedAnswer(
      req.headers.get('accept'),
      {
        kind: 'SelfSubjectReview',
        apiVersion: 'authentication.k8s.io/v1',
        metadata: { creationTimestamp: null },
        status: {
          userInfo: { username: w.who.user, groups: w.who.groups, ...(w.who.uid ? { uid: w.who.uid } : {}) },
        },
      },
      201,
    );
  if (path === SSRR) return rulesReview(req, rbac, w.who);
  return review(
    req,
    rbac,
    path === SSAR ? w.who : undefined,
    path === SSAR ? 'SelfSubjectAccessReview' : 'SubjectAccessReview',
  );
}
