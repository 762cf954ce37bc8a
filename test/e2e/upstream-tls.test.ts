/**
 * Reaching clusters the way production does: HTTPS with a private CA and a client certificate (mTLS), and
 * bearer tokens read from a file. Node does all of it; the worker refuses at startup what it cannot do.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedHandle, serveFetch } from '../../deploy/node/http.ts';
import { SimCluster, SimKarmada } from '../../sim/index.ts';
import { startFleet } from '../helpers/fleet.ts';
import { b64, createTestCA, type TestCA } from '../helpers/tls.ts';

const ANONYMOUS = { anonymous: { enabled: true } };

describe('upstream TLS and credentials', () => {
  let ca: TestCA;
  let member: SimCluster;
  let karmada: SimKarmada;
  let served: ServedHandle;
  let plain: ServedHandle;

  beforeAll(async () => {
    ca = createTestCA('fleet-upstream-ca');
    member = new SimCluster({ name: 'member1' });
    karmada = new SimKarmada({ name: 'karmada', members: new Map([['member1', member]]) });
    const server = ca.server();
    // the member demands a client certificate from its own CA, as kube-apiserver with --client-ca-file
    served = await serveFetch((r) => member.fetch(r), {
      tls: { cert: server.cert, key: server.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true },
    });
    plain = await serveFetch((r) => karmada.fetch(r));
  });
  afterAll(async () => {
    await served?.close(100);
    await plain?.close(100);
    member?.close();
    karmada?.close();
  });

  const memberWith = (fields: Record<string, unknown>) => ({
    controlPlane: { server: plain.url },
    members: { mode: 'static' as const, clusters: [{ name: 'member1', server: served.url, ...fields }] },
    authentication: ANONYMOUS,
  });

  it('Node: mTLS with a private CA reaches the member; the fleet’s token comes from a file', async () => {
    const client = ca.client('fleet-apiserver', ['system:masters']);
    const dir = mkdtempSync(join(tmpdir(), 'fleet-token-'));
    writeFileSync(join(dir, 'token'), 'token-from-file\n');
    const fleet = await startFleet(
      'node',
      memberWith({
        certificateAuthorityData: ca.certData,
        clientCertificateData: b64(client.cert),
        clientKeyData: b64(client.key),
        tokenFile: join(dir, 'token'),
      }),
    );
    try {
      const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/namespaces`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { kind: string }).kind).toBe('NamespaceList');
      const seen = member.requests.at(-1)!;
      expect(seen.headers.authorization).toBe('Bearer token-from-file');
    } finally {
      await fleet.stop();
    }
  });

  it('Node: a member whose certificate the CA does not vouch for is a 503 Status, not a hang', async () => {
    const other = createTestCA('someone-else');
    const client = ca.client('fleet-apiserver');
    const fleet = await startFleet(
      'node',
      memberWith({
        certificateAuthorityData: other.certData,
        clientCertificateData: b64(client.cert),
        clientKeyData: b64(client.key),
      }),
    );
    try {
      const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/namespaces`);
      expect(res.status).toBe(503);
      const s = (await res.json()) as { kind: string; message: string };
      expect(s.kind).toBe('Status');
      expect(s.message).toContain('cluster member1');
    } finally {
      await fleet.stop();
    }
  });

  it('Node: without a client certificate the member refuses the handshake: 503 Status', async () => {
    const fleet = await startFleet('node', memberWith({ certificateAuthorityData: ca.certData }));
    try {
      const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/namespaces`);
      expect(res.status).toBe(503);
    } finally {
      await fleet.stop();
    }
  });

  it('workerd: a private CA is refused with a message saying what to do instead', async () => {
    const fleet = await startFleet('workerd', memberWith({ certificateAuthorityData: ca.certData }));
    try {
      const res = await fetch(`${fleet.url}/clusterspaces/member1/api/v1/namespaces`);
      expect(res.status).toBe(503);
      const s = (await res.json()) as { message: string };
      expect(s.message).toContain('cannot trust a private CA');
      expect(s.message).toContain('config.members.clusters[0]');
    } finally {
      await fleet.stop();
    }
  });
});
