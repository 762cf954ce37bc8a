import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CLUSTER_NAME_MAX_LENGTH, decodeName, encodeName } from '../merge/names/index.ts';
import { endpointFromKubeconfig } from './kubeconfig.ts';
import { ConfigError, clusterName, MEMBER_NAME_MAX_LENGTH, parseConfig } from './schema.ts';
import { NO_AUTHENTICATOR } from './security.ts';

function errorOf(input: unknown): string {
  try {
    parseConfig(input);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('parseConfig', () => {
  it('fills defaults: Karmada membership, federation on, lenient partial failures', () => {
    const c = parseConfig({
      controlPlane: { server: 'https://karmada.example:5443', token: 't' },
      authentication: { anonymous: { enabled: true } },
    });
    expect(c.members).toEqual({ mode: 'karmada', refreshSeconds: 10 });
    expect(c.federation).toBe(true);
    expect(c.strict).toBe(false);
    expect(c.timeouts.requestSeconds).toBe(30);
    expect(c.upstreamHttp2).toBe('off');
  });

  it('upstreamHttp2 is off, alpn or h2c', () => {
    const base = { controlPlane: { server: 'https://x' }, authentication: { anonymous: { enabled: true } } };
    expect(parseConfig({ ...base, upstreamHttp2: 'alpn' }).upstreamHttp2).toBe('alpn');
    expect(parseConfig({ ...base, upstreamHttp2: 'h2c' }).upstreamHttp2).toBe('h2c');
    expect(errorOf({ ...base, upstreamHttp2: 'h2' })).toMatch(/config\.upstreamHttp2: .*alpn/);
    expect(errorOf({ ...base, upstreamHttp2: true })).toContain('config.upstreamHttp2');
  });

  it('names the field and the problem', () => {
    expect(errorOf({ controlPlane: { server: 'ftp://x' } })).toContain('config.controlPlane.server');
    expect(errorOf({ controlPlane: { server: 'https://x' }, federation: 'yes' })).toMatch(
      /config\.federation: .*boolean/,
    );
    expect(errorOf({ controlPlane: { server: 'https://x' }, timeouts: { requestSeconds: -1 } })).toContain(
      'config.timeouts.requestSeconds',
    );
    expect(errorOf({ controlPlane: { server: 'https://x' }, membrs: {} })).toContain('membrs');
    expect(errorOf({})).toContain('config.controlPlane');
  });

  it('refuses reserved, invalid and duplicate member names, naming the member', () => {
    const base = { controlPlane: { server: 'https://x' }, authentication: { anonymous: { enabled: true } } };
    const m = (clusters: unknown[]) => errorOf({ ...base, members: { mode: 'static', clusters } });
    expect(m([{ name: 'all', server: 'https://a' }])).toContain(
      'config.members.clusters[0].name: "all" and "karmada" are reserved',
    );
    expect(m([{ name: 'karmada', server: 'https://a' }])).toContain('reserved');
    expect(m([{ name: 'Member_1', server: 'https://a' }])).toContain('DNS-1123');
    expect(
      m([
        { name: 'a', server: 'https://a' },
        { name: 'a', server: 'https://b' },
      ]),
    ).toContain('duplicate member "a"');
    expect(m([{ name: 'a', server: 'https://a', clientCertificateData: 'x' }])).toContain('needs its key');
  });
});

describe('configuration errors', () => {
  it('come in one round, the missing authenticator with the rest, each naming the file', () => {
    let msg = '';
    try {
      parseConfig(
        {
          controlPlane: { server: 'ftp://x' },
          members: { mode: 'static', clusters: [{ name: 'all', server: 'https://a' }] },
        },
        'fleet.yaml',
      );
    } catch (e) {
      msg = (e as Error).message;
    }
    const lines = msg.split('\n');
    expect(lines.some((l) => l.startsWith('fleet.yaml: controlPlane'))).toBe(true);
    expect(
      lines.some((l) =>
        l.startsWith('fleet.yaml: members.clusters[0].name: "all" and "karmada" are reserved'),
      ),
    ).toBe(true);
    expect(
      lines.some((l) => l.startsWith('fleet.yaml: authentication: no authenticator is configured')),
    ).toBe(true);
    expect(lines.every((l) => l.startsWith('fleet.yaml: '))).toBe(true);
  });
});

describe('every problem of a file in one round', () => {
  const errorLines = (input: unknown) => {
    try {
      parseConfig(input, 'fleet.yaml');
    } catch (e) {
      return (e as Error).message.split('\n');
    }
    return [];
  };

  it('every bad static member with the rest of the file, each with its path', () => {
    const lines = errorLines({
      controlPlane: { server: 'https://x' },
      authentication: { anonymous: { enabled: true } },
      timeouts: { requestSeconds: -1 },
      members: {
        mode: 'static',
        clusters: [
          { name: 'ok', server: 'https://a' },
          { name: 'Bad_Name', server: 'https://b' },
          { name: 'c', server: 'ftp://c', clientKeyData: 'k' },
          { name: 'ok', server: 'https://d', typo: 1 },
        ],
      },
    });
    expect(lines).toEqual([
      'fleet.yaml: members.clusters[1].name: must be a DNS-1123 label (lowercase letters, digits, -)',
      'fleet.yaml: members.clusters[2].server: must be an http(s) URL',
      'fleet.yaml: members.clusters[2]: a client certificate needs its key (and a key its certificate)',
      'fleet.yaml: members.clusters[3]: Unrecognized key: "typo"',
      'fleet.yaml: timeouts.requestSeconds: Too small: expected number to be >0',
    ]);
    // once each member is well formed on its own, the duplicate is told with the rest
    const dup = errorLines({
      controlPlane: { server: 'ftp://x' },
      members: {
        mode: 'static',
        clusters: [
          { name: 'ok', server: 'https://a' },
          { name: 'c', server: 'https://c', clientKeyData: 'k' },
          { name: 'ok', server: 'https://d' },
        ],
      },
    });
    expect(dup).toEqual([
      'fleet.yaml: controlPlane.server: must be an http(s) URL',
      'fleet.yaml: members.clusters[1]: a client certificate needs its key (and a key its certificate)',
      'fleet.yaml: members.clusters[2].name: duplicate member "ok"',
      `fleet.yaml: authentication: ${NO_AUTHENTICATOR}`,
    ]);
  });

  it('zod’s words for types, bounds, options and unknown keys', () => {
    expect(
      errorLines({
        controlPlane: { server: 5 },
        federation: 'yes',
        upstreamHttp2: 'h3',
        limits: { maxBodyBytes: 1.5 },
        members: { mode: 'push' },
        extra: 1,
        other: 2,
        authentication: { anonymous: { enabled: true } },
      }),
    ).toEqual([
      'fleet.yaml: controlPlane.server: Invalid input: expected string, received number',
      "fleet.yaml: members.mode: Invalid discriminator value. Expected 'karmada' | 'static' | 'clusterProfiles'",
      'fleet.yaml: federation: Invalid input: expected boolean, received string',
      'fleet.yaml: upstreamHttp2: Invalid option: expected one of "off"|"alpn"|"h2c"',
      'fleet.yaml: limits.maxBodyBytes: Invalid input: expected int, received number',
      'fleet.yaml: Unrecognized keys: "extra", "other"',
    ]);
  });
});

describe('member names', () => {
  const base = { controlPlane: { server: 'https://x' }, authentication: { anonymous: { enabled: true } } };
  const member = (name: string) => ({
    ...base,
    members: { mode: 'static', clusters: [{ name, server: 'https://a' }] },
  });

  it('are at most 48 characters, as Karmada’s Cluster names', () => {
    expect(MEMBER_NAME_MAX_LENGTH).toBe(CLUSTER_NAME_MAX_LENGTH);
    expect(() => parseConfig(member('m'.repeat(48)))).not.toThrow();
    expect(() => parseConfig(member('m'.repeat(49)))).toThrow(
      /config\.members\.clusters\[0\]\.name: must be at most 48 characters, as Karmada’s|as Karmada's/,
    );
  });

  it('every name the configuration accepts is one the fleet-name codec decodes back', () => {
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    fc.assert(
      fc.property(label, fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$/), (cluster, name) => {
        if (!clusterName.safeParse(cluster).success) return;
        expect(decodeName(encodeName(name, cluster))).toEqual({ name, cluster });
      }),
      { numRuns: 300 },
    );
  });
});

describe('endpointFromKubeconfig', () => {
  const kubeconfig = `
apiVersion: v1
kind: Config
current-context: karmada-apiserver
clusters:
- name: karmada
  cluster:
    server: https://172.18.0.2:5443
    certificate-authority: ca.crt
- name: other
  cluster: { server: https://other:6443, insecure-skip-tls-verify: true }
users:
- name: admin
  user: { client-certificate-data: Y2VydA==, client-key-data: a2V5 }
- name: tok
  user: { token: abc }
- name: execer
  user: { exec: { command: aws } }
contexts:
- name: karmada-apiserver
  context: { cluster: karmada, user: admin }
- name: other
  context: { cluster: other, user: tok }
- name: bad
  context: { cluster: other, user: execer }
`;

  it('uses the current context and resolves relative files against the kubeconfig folder', () => {
    expect(endpointFromKubeconfig(kubeconfig, { baseDir: '/etc/karmada', where: 'kc' })).toEqual({
      server: 'https://172.18.0.2:5443',
      certificateAuthority: '/etc/karmada/ca.crt',
      clientCertificateData: 'Y2VydA==',
      clientKeyData: 'a2V5',
    });
  });

  it('uses a named context', () => {
    expect(endpointFromKubeconfig(kubeconfig, { context: 'other', where: 'kc' })).toEqual({
      server: 'https://other:6443',
      insecureSkipTLSVerify: true,
      token: 'abc',
    });
  });

  it('refuses what it cannot use, saying why', () => {
    expect(() => endpointFromKubeconfig(kubeconfig, { context: 'nope', where: 'kc' })).toThrow(
      /no context named "nope"/,
    );
    expect(() => endpointFromKubeconfig(kubeconfig, { context: 'bad', where: 'kc' })).toThrow(
      /exec\/auth-provider/,
    );
    expect(() => endpointFromKubeconfig(': : :', { where: 'kc' })).toThrow(ConfigError);
  });
});
