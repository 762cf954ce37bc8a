import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/schema.ts';
import { UpstreamClient } from './client.ts';
import {
  addressableProfiles,
  type ClusterProfile,
  type ClusterProfileSource,
  chooseProvider,
  profileReadiness,
  profilesPath,
  secretName,
} from './clusterprofiles.ts';
import type { ResolvedEndpoint } from './endpoint.ts';
import { Membership, MembershipError } from './membership.ts';
import type { Transport, UpstreamRequest } from './transport.ts';

const hub: ResolvedEndpoint = {
  name: 'hub',
  server: 'https://hub.example',
  insecureSkipTLSVerify: false,
  timeoutMs: 1_000,
  poolKey: 'hub',
  token: () => 'fleet-on-hub',
};
const b64 = (s: string) => Buffer.from(s).toString('base64');
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

function profile(
  name: string,
  opts: {
    ns?: string;
    healthy?: 'True' | 'False' | 'Unknown';
    joined?: 'True' | 'False';
    message?: string;
    providers?: Array<{ name: string; server?: string; clusterName?: string }>;
    legacy?: Array<{ name: string; server: string }>;
  } = {},
): ClusterProfile {
  const conditions = [];
  if (opts.healthy)
    conditions.push({
      type: 'ControlPlaneHealthy',
      status: opts.healthy,
      reason: 'Probe',
      message: opts.message,
    });
  if (opts.joined) conditions.push({ type: 'Joined', status: opts.joined, reason: 'Joined' });
  return {
    metadata: { name, namespace: opts.ns ?? 'fleet' },
    status: {
      conditions,
      accessProviders: (opts.providers ?? [{ name: 'token', server: `https://${name}.example:6443` }]).map(
        (p) => ({
          name: p.name,
          cluster: {
            ...(p.server ? { server: p.server } : {}),
            'certificate-authority-data': b64(CA),
            ...(p.clusterName
              ? {
                  extensions: [
                    { name: 'client.authentication.k8s.io/exec', extension: { clusterName: p.clusterName } },
                  ],
                }
              : {}),
          },
        }),
      ),
      ...(opts.legacy
        ? { credentialProviders: opts.legacy.map((l) => ({ name: l.name, cluster: { server: l.server } })) }
        : {}),
    },
  };
}

describe('ClusterProfile parsing', () => {
  it('ready is ControlPlaneHealthy True and not Joined False; the reason is the condition message', () => {
    expect(profileReadiness(profile('a', { healthy: 'True' }))).toEqual({ ready: true });
    expect(profileReadiness(profile('a', { healthy: 'True', joined: 'True' }))).toEqual({ ready: true });
    expect(profileReadiness(profile('a', { healthy: 'False', message: 'apiserver down' }))).toEqual({
      ready: false,
      reason: 'apiserver down',
    });
    expect(profileReadiness(profile('a', { healthy: 'Unknown' }))).toEqual({ ready: false, reason: 'Probe' });
    expect(profileReadiness(profile('a'))).toEqual({
      ready: false,
      reason: 'no ControlPlaneHealthy condition',
    });
    expect(profileReadiness(profile('a', { healthy: 'True', joined: 'False' }))).toEqual({
      ready: false,
      reason: 'Joined',
    });
  });

  it('the provider is the first configured one the profile lists; accessProviders win over the deprecated credentialProviders', () => {
    const p = profile('a', {
      providers: [
        { name: 'oidc', server: 'https://oidc' },
        { name: 'secretreader', server: 'https://sr' },
      ],
      legacy: [
        { name: 'secretreader', server: 'https://old' },
        { name: 'legacy', server: 'https://legacy' },
      ],
    });
    expect(chooseProvider(p, [{ name: 'secretreader' }, { name: 'oidc' }])?.cluster.server).toBe(
      'https://sr',
    );
    expect(chooseProvider(p, [{ name: 'legacy' }])?.cluster.server).toBe('https://legacy');
    expect(chooseProvider(p, [{ name: 'gke' }])).toBeUndefined();
  });

  it('the Secret is named by the exec extension clusterName, else by the profile', () => {
    const cluster = profile('a', { providers: [{ name: 's', server: 'https://x', clusterName: 'spoke-1' }] })
      .status!.accessProviders![0]!.cluster!;
    expect(secretName('a', cluster)).toBe('spoke-1');
    expect(secretName('a', { server: 'https://x' })).toBe('a');
  });

  it('the list path: a namespace and a cluster manager narrow it', () => {
    expect(profilesPath({})).toBe('/apis/multicluster.x-k8s.io/v1alpha1/clusterprofiles');
    expect(profilesPath({ namespace: 'fleet', clusterManager: 'ocm' })).toBe(
      '/apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet/clusterprofiles?labelSelector=x-k8s.io%2Fcluster-manager%3Docm',
    );
  });

  it('leaves out, with a warning, what cannot be addressed: a bad or reserved name, no known provider, no server, a name twice', () => {
    const warned: string[] = [];
    const got = addressableProfiles(
      [
        profile('zeta', { healthy: 'True' }),
        profile('karmada', { healthy: 'True' }),
        profile('Upper', { healthy: 'True' }),
        profile('x'.repeat(49), { healthy: 'True' }),
        profile('other', { providers: [{ name: 'gke', server: 'https://g' }] }),
        profile('noserver', { providers: [{ name: 'token' }] }),
        profile('alpha', { ns: 'b', healthy: 'True' }),
        profile('alpha', { ns: 'a', healthy: 'False' }),
      ],
      [{ name: 'token' }],
      (m) => warned.push(m),
    );
    expect(got.map((a) => [a.namespace, a.name, a.ready])).toEqual([
      ['a', 'alpha', false],
      ['fleet', 'zeta', true],
    ]);
    expect(warned).toHaveLength(6);
    expect(warned.join('\n')).toMatch(/fleet\/karmada: its name "all" and "karmada" are reserved/);
    expect(warned.join('\n')).toMatch(
      /fleet\/other: it lists none of the configured access providers \(token\)/,
    );
    expect(warned.join('\n')).toMatch(/b\/alpha: a\/alpha has the same member name/);
  });
});

describe('ClusterProfile configuration', () => {
  const base = { controlPlane: { server: 'https://cp' }, authentication: { anonymous: { enabled: true } } };
  it('takes a hub, a namespace and providers; refreshSeconds defaults to 10', () => {
    const c = parseConfig({
      ...base,
      members: {
        mode: 'clusterProfiles',
        hub: { server: 'https://hub', token: 't' },
        namespace: 'fleet',
        accessProviders: [
          { name: 'secretreader', secretReader: { namespace: 'fleet' } },
          { name: 'x', token: 'y' },
        ],
      },
    });
    expect(c.members).toMatchObject({ mode: 'clusterProfiles', refreshSeconds: 10, namespace: 'fleet' });
  });

  it('names every problem: no provider, secretReader beside a fixed credential, a provider twice, a bad hub', () => {
    const bad = (members: unknown) => () => parseConfig({ ...base, members }, 'fleet.yaml');
    expect(bad({ mode: 'clusterProfiles', accessProviders: [] })).toThrow(
      /members.accessProviders: Too small/,
    );
    expect(
      bad({
        mode: 'clusterProfiles',
        hub: { server: 'ftp://hub' },
        accessProviders: [
          { name: 'a', secretReader: { namespace: 'ns' }, token: 't' },
          { name: 'a', clientCertificateData: 'x' },
        ],
      }),
    ).toThrow(
      [
        'fleet.yaml: members.hub.server: must be an http(s) URL',
        'fleet.yaml: members.accessProviders[0]: secretReader reads the credential from the hub: set it or a fixed credential, not both',
        'fleet.yaml: members.accessProviders[1]: a client certificate needs its key (and a key its certificate)',
        'fleet.yaml: members.accessProviders[1].name: duplicate provider "a"',
      ].join('\n'),
    );
  });
});

/** A hub whose profiles and Secrets the test sets; records what it was asked and with which token. */
function fakeHub() {
  const state = {
    profiles: [] as ClusterProfile[],
    secrets: new Map<string, Record<string, string>>(),
    fail: false as false | number,
    asked: [] as Array<{ url: string; auth: string | null }>,
  };
  const transport: Transport = {
    send: async (_e, r: UpstreamRequest) => {
      state.asked.push({ url: r.url, auth: r.headers.get('authorization') });
      if (state.fail) return new Response('{"kind":"Status","message":"hub is sad"}', { status: state.fail });
      const path = new URL(r.url).pathname;
      const s = /^\/api\/v1\/namespaces\/([^/]+)\/secrets\/([^/]+)$/.exec(path);
      if (s) {
        const data = state.secrets.get(`${s[1]}/${s[2]}`);
        return data
          ? Response.json({ kind: 'Secret', data })
          : Response.json({ kind: 'Status', message: `secrets "${s[2]}" not found` }, { status: 404 });
      }
      return Response.json({ kind: 'ClusterProfileList', items: state.profiles });
    },
  };
  return { state, client: new UpstreamClient(transport) };
}

describe('Membership (clusterProfiles)', () => {
  const source = (over: Partial<ClusterProfileSource> = {}): ClusterProfileSource => ({
    mode: 'clusterProfiles',
    refreshMs: 1_000,
    hub,
    namespace: 'fleet',
    providers: [
      { name: 'secretreader', secretReader: { namespace: 'fleet-system' } },
      { name: 'token', token: () => 'fixed-token' },
    ],
    timeoutMs: 5_000,
    ...over,
  });

  it('each profile is a member at its provider’s server and CA, with the Secret’s token or the provider’s own', async () => {
    const h = fakeHub();
    h.state.profiles = [
      profile('m2', {
        healthy: 'True',
        providers: [{ name: 'secretreader', server: 'https://m2.example:6443/', clusterName: 'spoke-2' }],
      }),
      profile('m1', { healthy: 'False', message: 'lease expired' }),
    ];
    h.state.secrets.set('fleet-system/spoke-2', { token: b64('m2-token\n') });
    const m = new Membership(hub, source(), h.client);
    const members = await m.members();
    expect(members.map((x) => [x.name, x.ready, x.reason])).toEqual([
      ['m1', false, 'lease expired'],
      ['m2', true, undefined],
    ]);
    expect(members[1]!.endpoint).toMatchObject({
      name: 'm2',
      server: 'https://m2.example:6443',
      caPem: CA,
      poolKey: expect.stringMatching(/^m2:https:\/\/m2\.example:6443:[0-9a-f]+$/),
      timeoutMs: 5_000,
    });
    expect(members[1]!.endpoint.token?.()).toBe('m2-token');
    expect(members[0]!.endpoint.token?.()).toBe('fixed-token');
    // the unhealthy one is not dialled: the client answers as for an unreachable member, saying why
    expect([members[0]!.endpoint.notReady, members[1]!.endpoint.notReady]).toEqual([
      'not ready in ClusterProfile fleet/m1: lease expired',
      undefined,
    ]);
    expect(h.state.asked.map((a) => [new URL(a.url).pathname, a.auth])).toEqual([
      ['/apis/multicluster.x-k8s.io/v1alpha1/namespaces/fleet/clusterprofiles', 'Bearer fleet-on-hub'],
      ['/api/v1/namespaces/fleet-system/secrets/spoke-2', 'Bearer fleet-on-hub'],
    ]);
    // the control plane stays the `karmada` clusterspace; members are found by name
    expect(await m.endpointFor('m2')).toBe(members[1]!.endpoint);
    expect(m.knownEndpoint('karmada')).toBe(hub);
  });

  it('a missing Secret keeps the member, not ready, saying why', async () => {
    const h = fakeHub();
    h.state.profiles = [
      profile('m1', { healthy: 'True', providers: [{ name: 'secretreader', server: 'https://m1' }] }),
    ];
    const [m1] = await new Membership(hub, source(), h.client).members();
    expect(m1).toMatchObject({ name: 'm1', ready: false });
    expect(m1!.reason).toMatch(/reading Secret fleet-system\/m1 failed: 404 secrets "m1" not found/);
    expect(m1!.endpoint.token).toBeUndefined();
  });

  it('a profile the runtime cannot reach (its check throws) is left out', async () => {
    const h = fakeHub();
    h.state.profiles = [profile('m1', { healthy: 'True' }), profile('m2', { healthy: 'True' })];
    const warned: string[] = [];
    const orig = console.warn;
    console.warn = (m: string) => warned.push(m);
    try {
      const members = await new Membership(
        hub,
        source({
          check: (ep, where) => {
            if (ep.name === 'm1') throw new Error(`${where}: the worker runtime cannot trust a private CA`);
          },
        }),
        h.client,
      ).members();
      expect(members.map((x) => x.name)).toEqual(['m2']);
    } finally {
      console.warn = orig;
    }
    expect(warned).toEqual([
      'fleet: ignoring ClusterProfile fleet/m1: the worker runtime cannot trust a private CA',
    ]);
  });

  it('refreshes after refreshMs; a failing hub is a MembershipError at first, the last list afterwards', async () => {
    let now = 0;
    const h = fakeHub();
    const m = new Membership(hub, source(), h.client, () => now);
    h.state.fail = 503;
    await expect(m.members()).rejects.toThrow(MembershipError);
    await expect(m.members()).rejects.toThrow(/listing ClusterProfiles failed: 503 hub is sad/);
    h.state.fail = false;
    h.state.profiles = [profile('m1', { healthy: 'True' })];
    expect((await m.members()).map((x) => x.name)).toEqual(['m1']);
    h.state.profiles.push(profile('m3', { healthy: 'True' }));
    now = 999;
    expect((await m.members()).map((x) => x.name)).toEqual(['m1']);
    now = 1_000;
    expect((await m.members()).map((x) => x.name)).toEqual(['m1', 'm3']);
    h.state.fail = 500;
    now = 2_000;
    expect((await m.members()).map((x) => x.name)).toEqual(['m1', 'm3']);
  });
});
