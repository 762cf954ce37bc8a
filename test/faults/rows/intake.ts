/**
 * Issue 11, intake rows, on Node and in workerd, with every cluster behind a fault proxy that records
 * what reached it: a refused request must reach nothing upstream. Raw sockets, so the request target and
 * the body framing go on the wire exactly as written.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import { type ServedHandle, serveFetch } from '../../../deploy/node/http.ts';
import type { Runtime } from '../../helpers/fleet.ts';
import { rawRequest } from '../client.ts';
import { type FaultFleet, startFaultFleet } from '../fleet.ts';
import { selector } from './select.ts';

const TOKEN = 'intake-token-0123456789';

/** an OIDC issuer that signs whatever claims it is given (exp included or not) */
async function jwtIssuer(): Promise<{
  url: string;
  sign(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let url = '';
  const h: ServedHandle = await serveFetch((req) => {
    const path = new URL(req.url).pathname;
    if (path === '/.well-known/openid-configuration')
      return Response.json({ issuer: url, jwks_uri: `${url}/jwks` });
    if (path === '/jwks') return Response.json({ keys: [jwk] });
    return new Response('not found', { status: 404 });
  });
  url = h.url;
  return {
    url,
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(privateKey),
    close: () => h.close(500),
  };
}

export function describeIntakeRows(runtime: Runtime, ids: readonly string[]): void {
  const t = selector(ids);
  describe(`issue 11 intake rows on ${runtime}`, () => {
    let ff: FaultFleet;
    let port: number;
    let issuer: Awaited<ReturnType<typeof jwtIssuer>>;
    beforeAll(async () => {
      issuer = await jwtIssuer();
      ff = await startFaultFleet(runtime, {
        config: {
          authentication: {
            staticTokens: { csv: `${TOKEN},alice,uid-alice,"system:masters"` },
            oidc: [
              {
                issuer: issuer.url,
                audiences: ['fleet'],
                jwksUrl: `${issuer.url}/jwks`,
                jwksMinRefreshSeconds: 0,
              },
            ],
          },
        },
      });
      port = Number(new URL(ff.url).port);
    });
    afterEach(() => ff.reset());
    afterAll(async () => {
      await ff?.stop();
      await issuer?.close();
    });

    /** what reached any cluster besides the fleet's own membership and discovery traffic */
    const reachedUpstream = (needle: RegExp) =>
      ff.proxies.flatMap((p) => p.requests).filter((r) => needle.test(r.url) || needle.test(r.method));

    // row 5: a chunked body that never ends, from a caller with no credentials
    t('row5-never-ends')(
      'row 5: an unauthenticated chunked POST body that never ends is answered (4xx), nothing upstream',
      async () => {
        const head =
          'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: fleet\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
        const kb = 'x'.repeat(1024);
        const r = await rawRequest(port, head, {
          body: `400\r\n{"a":"${kb.slice(7)}\r\n`.repeat(8),
          timeoutMs: 45_000,
        });
        expect(r.status, 'answered within 45 s').toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
        expect(reachedUpstream(/^POST$/)).toEqual([]);
      },
    );

    t('row5-large')(
      'row 5: an unauthenticated 5 MiB chunked body: refused (401/413) without buffering it, nothing upstream',
      async () => {
        const head =
          'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: fleet\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
        const mb = 'y'.repeat(1024 * 1024);
        const chunk = `${(1024 * 1024).toString(16)}\r\n${mb}\r\n`;
        const r = await rawRequest(port, head, { body: chunk.repeat(5), timeoutMs: 30_000 });
        expect([401, 413]).toContain(r.status);
        expect(reachedUpstream(/^POST$/)).toEqual([]);
      },
    );

    // row 6: dot segments and encoded slashes, refused from the raw target before any normalisation
    const row6 = async (target: string) => {
      const r = await rawRequest(
        port,
        `GET ${target} HTTP/1.1\r\nHost: fleet\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`,
      );
      expect(r.status).toBe(400);
      expect(r.text).toMatch(/"kind":"Status"/);
      expect(reachedUpstream(/\/(pods|secrets)\b/)).toEqual([]);
    };
    t('row6-dots').each([
      '/api/v1/namespaces/%2e%2e/pods',
      '/api/v1/namespaces/shop/../kube-system/secrets',
      '/api/v1/namespaces/.%2e/secrets',
      '/clusterspaces/member1/%2e%2e/karmada/api/v1/secrets',
      '/clusterspaces/member1/../karmada/api/v1/secrets',
    ])('row 6: GET %s is a 400 Status and reaches no cluster', row6);
    t('row6-slash').each(['/api/v1/namespaces/shop%2Fx/pods'])(
      'row 6: GET %s (encoded slash) is a 400 Status and reaches no cluster',
      row6,
    );

    // row 7: a JWT without exp (kube's OIDC authenticator refuses it)
    t('row7')('row 7: an OIDC token without exp is a 401, and reaches no cluster', async () => {
      const now = Math.floor(Date.now() / 1000);
      const noExp = await issuer.sign({ iss: issuer.url, aud: 'fleet', sub: 'bob', iat: now });
      const withExp = await issuer.sign({
        iss: issuer.url,
        aud: 'fleet',
        sub: 'bob',
        iat: now,
        exp: now + 600,
      });
      const get = (t: string) =>
        rawRequest(
          port,
          `GET /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: fleet\r\nAuthorization: Bearer ${t}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`,
        );
      expect((await get(withExp)).status, 'the same token with exp is accepted').toBe(200);
      ff.reset();
      const r = await get(noExp);
      expect(r.status).toBe(401);
      expect(reachedUpstream(/configmaps/)).toEqual([]);
    });

    // row 8: nesting past any sane depth is a 400, never a 500
    t('row8')('row 8: a create whose JSON nests 5,000 deep is a 400 Status, nothing upstream', async () => {
      const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{},"x":${'['.repeat(5000)}${']'.repeat(5000)}}`;
      const r = await rawRequest(
        port,
        `POST /clusterspaces/member1/api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: fleet\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        { body },
      );
      expect(r.status, r.text).toBe(400);
      expect(r.text).toMatch(/"kind":"Status"/);
      expect(reachedUpstream(/^POST$/)).toEqual([]);
    });
  });
}
