/**
 * Client certificates on Workers: the edge terminates TLS, so the worker never sees one and bundles no
 * x509 or front-proxy authenticator (src/auth/certificates.ts is linked in by the Node server only). In
 * workerd a configuration that asks for either is answered with a 503 Status naming the field, and
 * front-proxy headers on a request are nobody's identity: the caller is whoever the configured
 * authenticators say (here anonymous), as before the authenticators moved behind the Node seam.
 */
import { describe, expect, it } from 'vitest';
import { workerFleetsOverOneMember } from '../helpers/workerfleets.ts';

const fleets = workerFleetsOverOneMember();

function worker(authentication: unknown): Promise<string> {
  return fleets.start(
    JSON.stringify({
      controlPlane: { server: fleets.sims.karmadaUrl, token: 'fleet-demo-token' },
      members: { mode: 'karmada', refreshSeconds: 2 },
      authentication,
    }),
  );
}

describe('client certificates in workerd', () => {
  it('refuses x509 and front-proxy configuration with a 503 Status naming the field', async () => {
    for (const [authentication, field] of [
      [{ x509: { clientCAData: btoa('ca') } }, 'config.authentication.x509'],
      [
        { frontProxy: { clientCAData: btoa('ca') }, anonymous: { enabled: true } },
        'config.authentication.frontProxy',
      ],
    ] as const) {
      const url = await worker(authentication);
      const r = await fetch(`${url}/api/v1/namespaces`);
      expect(r.status).toBe(503);
      const s = (await r.json()) as { kind: string; message: string };
      expect(s.kind).toBe('Status');
      expect(s.message).toContain(`invalid configuration: ${field}:`);
      expect(s.message).toMatch(/Node/);
    }
  });

  it('takes front-proxy headers for no identity when front-proxy is not configured', async () => {
    const url = await worker({ anonymous: { enabled: true } });
    const r = await fetch(`${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'X-Remote-User': 'dave',
        'X-Remote-Group': 'system:masters',
        'X-Remote-Extra-Scopes': 'all',
      },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    });
    expect(r.status).toBe(201);
    const review = (await r.json()) as { status: { userInfo: { username: string; groups?: string[] } } };
    expect(review.status.userInfo.username).toBe('system:anonymous');
    expect(review.status.userInfo.groups ?? []).not.toContain('system:masters');
  });
});
