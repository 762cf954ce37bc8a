import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRequestInfo, RequestPathError, splitPath } from './info.ts';

const q = (s = '') => new URLSearchParams(s);
const parse = (method: string, path: string, query = '') => parseRequestInfo(method, path, q(query));

describe('parseRequestInfo', () => {
  it.each([
    [
      'GET',
      '/api/v1/pods',
      '',
      { verb: 'list', apiGroup: '', apiVersion: 'v1', resource: 'pods', namespace: '', name: '' },
    ],
    [
      'GET',
      '/api/v1/namespaces/default/pods/web',
      '',
      { verb: 'get', namespace: 'default', resource: 'pods', name: 'web' },
    ],
    [
      'GET',
      '/api/v1/namespaces/default/pods/web/log',
      'follow=true',
      { verb: 'get', subresource: 'log', name: 'web' },
    ],
    [
      'GET',
      '/apis/apps/v1/namespaces/shop/deployments',
      'watch=true',
      { verb: 'watch', apiGroup: 'apps', resource: 'deployments' },
    ],
    [
      'GET',
      '/api/v1/watch/namespaces/default/pods',
      '',
      { verb: 'watch', namespace: 'default', resource: 'pods' },
    ],
    ['POST', '/apis/apps/v1/namespaces/shop/deployments', '', { verb: 'create', resource: 'deployments' }],
    [
      'PUT',
      '/apis/apps/v1/namespaces/shop/deployments/web/scale',
      '',
      { verb: 'update', subresource: 'scale' },
    ],
    ['PATCH', '/api/v1/nodes/n1', '', { verb: 'patch', resource: 'nodes', name: 'n1', namespace: '' }],
    ['DELETE', '/api/v1/namespaces/default/pods', '', { verb: 'deletecollection' }],
    ['DELETE', '/api/v1/namespaces/default/pods/x', '', { verb: 'delete', name: 'x' }],
    [
      'GET',
      '/api/v1/namespaces/kube-system',
      '',
      { verb: 'get', resource: 'namespaces', name: 'kube-system', namespace: 'kube-system' },
    ],
    [
      'PUT',
      '/api/v1/namespaces/x/finalize',
      '',
      { verb: 'update', resource: 'namespaces', name: 'x', subresource: 'finalize' },
    ],
    ['GET', '/api/v1/namespaces/default/pods/web/proxy/a/b', '', { subresource: 'proxy', extra: ['a', 'b'] }],
  ])('%s %s?%s', (method, path, query, want) => {
    const info = parse(method, path, query);
    expect(info.isResourceRequest).toBe(true);
    expect(info).toMatchObject(want);
    expect(info.clusterspace).toBeUndefined();
    expect(info.kubePath).toBe(path);
  });

  it.each([
    ['/version', 'get'],
    ['/api', 'get'],
    ['/apis', 'get'],
    ['/apis/apps', 'get'],
    ['/openapi/v3/apis/apps/v1', 'get'],
    ['/healthz', 'get'],
  ])('non-resource %s', (path, verb) => {
    const info = parse('GET', path);
    expect(info.isResourceRequest).toBe(false);
    expect(info.verb).toBe(verb);
    expect(info.kubePath).toBe(path);
  });

  it('reads discovery group and version', () => {
    expect(parse('GET', '/apis/apps/v1')).toMatchObject({
      isResourceRequest: false,
      apiGroup: 'apps',
      apiVersion: 'v1',
    });
    expect(parse('GET', '/api/v1')).toMatchObject({
      isResourceRequest: false,
      apiGroup: '',
      apiVersion: 'v1',
    });
  });

  it('takes the clusterspace prefix off and keeps the rest as the Kubernetes path', () => {
    const info = parse('GET', '/clusterspaces/member1/api/v1/namespaces/default/pods/web');
    expect(info).toMatchObject({
      clusterspace: 'member1',
      clusterspaceForm: 'prefix',
      kubePath: '/api/v1/namespaces/default/pods/web',
      verb: 'get',
      name: 'web',
    });
    expect(parse('GET', '/clusterspaces/karmada/version')).toMatchObject({
      clusterspace: 'karmada',
      kubePath: '/version',
      isResourceRequest: false,
    });
    expect(parse('GET', '/clusterspaces/member1')).toMatchObject({ clusterspace: 'member1', kubePath: '/' });
  });

  it('reads the in-path clusterspace, namespaced and cluster-wide', () => {
    expect(parse('GET', '/api/v1/namespaces/default/clusterspaces/member2/pods/web/log')).toMatchObject({
      clusterspace: 'member2',
      clusterspaceForm: 'inpath',
      namespace: 'default',
      resource: 'pods',
      name: 'web',
      subresource: 'log',
      kubePath: '/api/v1/namespaces/default/pods/web/log',
    });
    expect(parse('GET', '/apis/apps/v1/clusterspaces/all/deployments')).toMatchObject({
      clusterspace: 'all',
      verb: 'list',
      resource: 'deployments',
      kubePath: '/apis/apps/v1/deployments',
    });
    // a namespace that happens to be called "clusterspaces" is still a namespace
    expect(parse('GET', '/api/v1/namespaces/clusterspaces')).toMatchObject({
      resource: 'namespaces',
      name: 'clusterspaces',
    });
  });

  it('refuses a clusterspace named twice', () => {
    expect(() => parse('GET', '/clusterspaces/a/api/v1/clusterspaces/b/pods')).toThrow(RequestPathError);
  });

  it.each([
    ['/api/v1/namespaces/a%2Fb/pods', 400],
    ['/api/v1//pods', 400],
    ['/api/v1/namespaces/%zz/pods', 400],
    ['/clusterspaces', 404],
  ])('refuses %s with %i', (path, code) => {
    try {
      parse('GET', path);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(RequestPathError);
      expect((e as RequestPathError).code).toBe(code);
    }
  });

  it('never throws anything but RequestPathError, whatever the path', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
        fc.array(
          fc.oneof(
            fc.constantFrom(
              'api',
              'apis',
              'v1',
              'namespaces',
              'clusterspaces',
              'watch',
              '',
              '..',
              '%2F',
              '%',
            ),
            fc.string(),
          ),
          {
            maxLength: 10,
          },
        ),
        (method, segs) => {
          try {
            const info = parse(method, `/${segs.join('/')}`);
            expect(info.kubePath.startsWith('/')).toBe(true);
          } catch (e) {
            expect(e).toBeInstanceOf(RequestPathError);
          }
        },
      ),
      { numRuns: 5000 },
    );
  });
});

/** splitPath as it was before its fast lane for paths without escapes: the reference it must equal. */
function referenceSplit(rawPath: string): { segs: string[]; raw: string[] } {
  const decode = (seg: string): string => {
    let s: string;
    try {
      s = decodeURIComponent(seg);
    } catch {
      throw new RequestPathError(400, `invalid percent-encoding in path segment "${seg}"`);
    }
    if (s.includes('/'))
      throw new RequestPathError(400, 'percent-encoded "/" is not allowed in a path segment');
    if (s === '.' || s === '..') throw new RequestPathError(400, `path segment "${s}" is not allowed`);
    if (s.includes('\0')) throw new RequestPathError(400, 'NUL is not allowed in a path');
    return s;
  };
  if (!rawPath.startsWith('/')) throw new RequestPathError(400, 'path must be absolute');
  // kube's director matches API roots as path prefixes, uncleaned: `//…` reaches its not-found handler
  if (rawPath.startsWith('//'))
    throw new RequestPathError(404, 'the server could not find the requested resource');
  const trimmed = rawPath.replace(/^\/+/, '').replace(/\/+$/, '');
  if (trimmed === '') return { segs: [], raw: [] };
  const raw = trimmed.split('/');
  if (raw.some((r) => r === '')) throw new RequestPathError(400, 'empty path segment ("//") is not allowed');
  return { segs: raw.map(decode), raw };
}

function outcome(f: () => { readonly segs: readonly string[]; readonly raw: readonly string[] }) {
  try {
    const r = f();
    return { segs: [...r.segs], raw: [...r.raw] };
  } catch (e) {
    return { error: (e as RequestPathError).code, message: (e as Error).message };
  }
}

describe('splitPath', () => {
  it('gives what the plain split-and-decode gives, refusals and their messages included (random paths)', () => {
    const piece = fc.constantFrom(
      '/',
      '//',
      '.',
      '..',
      'a',
      'pods',
      '%2e',
      '%2F',
      '%',
      '%zz',
      '\0',
      'é',
      '%C3%A9',
      '~',
      '-',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.boolean(), (parts, absolute) => {
        const path = (absolute ? '/' : '') + parts.join('');
        expect(outcome(() => splitPath(path))).toEqual(outcome(() => referenceSplit(path)));
        // asked again (the raw-target check, then the parser): the same answer
        expect(outcome(() => splitPath(path))).toEqual(outcome(() => referenceSplit(path)));
      }),
      { numRuns: 5000 },
    );
  });
});

/** parseRequestInfo as it was before it read the split path by index: the reference it must equal. */
function referenceParse(method: string, rawPath: string, query: URLSearchParams) {
  const { segs, raw } = splitPath(rawPath);
  let clusterspace: string | undefined;
  let clusterspaceForm: 'prefix' | 'inpath' | undefined;
  let parts = segs;
  let rawParts = raw;
  if (parts[0] === 'clusterspaces') {
    if (parts.length < 2)
      throw new RequestPathError(
        404,
        'the path /clusterspaces needs a clusterspace: /clusterspaces/<cluster>/…',
      );
    clusterspace = parts[1];
    clusterspaceForm = 'prefix';
    parts = parts.slice(2);
    rawParts = rawParts.slice(2);
  }
  const info: Record<string, unknown> = {
    rawPath,
    clusterspace,
    clusterspaceForm,
    kubePath: `/${rawParts.join('/')}`,
    isResourceRequest: false,
    verb: method.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    extra: [],
  };
  const prefix = parts[0];
  if (prefix !== 'api' && prefix !== 'apis') return info;
  info.apiPrefix = prefix;
  const headLen = prefix === 'api' ? 2 : 3;
  if (parts.length <= headLen) {
    if (prefix === 'apis' && parts.length >= 2) info.apiGroup = parts[1]!;
    if (parts.length === headLen) info.apiVersion = parts[headLen - 1]!;
    return info;
  }
  info.isResourceRequest = true;
  info.apiGroup = prefix === 'api' ? '' : parts[1]!;
  info.apiVersion = parts[headLen - 1]!;
  const head = rawParts.slice(0, headLen);
  let rest = parts.slice(headLen);
  let rawRest = rawParts.slice(headLen);
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
    rawRest = rawRest.slice(1);
  }
  const takeInPath = (at: number) => {
    if (rest[at] !== 'clusterspaces' || rest.length < at + 3) return;
    if (clusterspace !== undefined)
      throw new RequestPathError(400, 'a clusterspace is named twice (prefix and in-path); name it once');
    clusterspace = rest[at + 1];
    clusterspaceForm = 'inpath';
    rest = [...rest.slice(0, at), ...rest.slice(at + 2)];
    rawRest = [...rawRest.slice(0, at), ...rawRest.slice(at + 2)];
  };
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      info.namespace = rest[1]!;
      takeInPath(2);
      if (rest.length > 2 && !['status', 'finalize'].includes(rest[2]!)) rest = rest.slice(2);
    }
  } else {
    takeInPath(0);
  }
  info.clusterspace = clusterspace;
  info.clusterspaceForm = clusterspaceForm;
  info.kubePath = `/${[...head, ...(watchPath ? ['watch'] : []), ...rawRest].join('/')}`;
  info.resource = rest[0] ?? '';
  info.name = rest[1] ?? '';
  info.subresource = rest[2] ?? '';
  info.extra = rest.slice(3);
  if (info.resource === '') throw new RequestPathError(404, `no resource in path ${rawPath}`);
  const m = method.toUpperCase();
  const isWatch = watchPath || !['0', 'false'].includes(query.get('watch')?.toLowerCase() ?? 'false');
  const named = info.name !== '';
  if (m === 'POST') info.verb = 'create';
  else if (m === 'GET' || m === 'HEAD') info.verb = isWatch ? 'watch' : named ? 'get' : 'list';
  else if (m === 'PUT') info.verb = 'update';
  else if (m === 'PATCH') info.verb = 'patch';
  else if (m === 'DELETE') info.verb = named ? 'delete' : 'deletecollection';
  else info.verb = m.toLowerCase();
  return info;
}

function parsed(f: () => object): { info: Record<string, unknown> } | { error: number; message: string } {
  try {
    return { info: { ...f() } };
  } catch (e) {
    if (!(e instanceof RequestPathError)) throw e;
    return { error: e.code, message: e.message };
  }
}

describe('parseRequestInfo by index', () => {
  it('gives what the slicing parser gave, refusals included, key order too (random paths)', () => {
    const seg = fc.constantFrom(
      'api',
      'apis',
      'v1',
      'apps',
      'namespaces',
      'clusterspaces',
      'watch',
      'w%61tch',
      'status',
      'finalize',
      'pods',
      'p%6Fds',
      'x',
      'log',
      '',
    );
    const method = fc.constantFrom(
      'GET',
      'get',
      'POST',
      'PUT',
      'PATCH',
      'DELETE',
      'HEAD',
      'OPTIONS',
      'Delete',
    );
    const query = fc.constantFrom('', 'watch=1', 'watch=false', 'watch=0', 'watch=', 'watch=FALSE');
    fc.assert(
      fc.property(method, fc.array(seg, { maxLength: 12 }), query, fc.boolean(), (m, segs, qs, trailing) => {
        const path = `/${segs.join('/')}${trailing ? '/' : ''}`;
        const a = parsed(() => parseRequestInfo(m, path, q(qs)));
        const b = parsed(() => referenceParse(m, path, q(qs)));
        expect(a).toStrictEqual(b);
        if ('info' in a && 'info' in b) expect(Object.keys(a.info)).toEqual(Object.keys(b.info));
      }),
      { numRuns: 5000 },
    );
  });
});
