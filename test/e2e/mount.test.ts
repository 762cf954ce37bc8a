/**
 * The fleet mounted in another Hono app under a prefix (`outer.route('/k8s', fleet)`), behind that app's
 * own middleware: `hono/jwt` checks an RS256 token before any request reaches the fleet, and the fleet's
 * own OIDC authenticator (the same issuer's keys, inline) turns it into the caller it impersonates in
 * every cluster. Served by @hono/node-server over TLS (kubectl sends a token to https servers only), and
 * driven by real kubectl against `https://…/k8s`.
 */
import { rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { jwt } from 'hono/jwt';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServedSimFleet, startSimFleet } from '../../deploy/node/demo.ts';
import { createApp } from '../../src/app.ts';
import { parseConfig } from '../../src/config/schema.ts';
import { buildFleet } from '../../src/fleet.ts';
import { nodePlatform } from '../../src/platform/node.ts';
import type { Platform } from '../../src/platform/types.ts';
import { Kubectl } from '../helpers/kubectl.ts';
import { createTestCA } from '../helpers/tls.ts';

const ISSUER = 'https://edge.example';
const PODS = { group: '', version: 'v1', resource: 'pods' };

describe('the fleet mounted under /k8s in another Hono app, hono/jwt in front', () => {
  let sims: ServedSimFleet;
  let platform: Platform;
  let server: ServerType;
  let url: string;
  let token: string;
  let foreign: string;
  let caPem: string;
  let fleetSaw = 0;

  beforeAll(async () => {
    sims = await startSimFleet();
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'edge-1', alg: 'RS256', use: 'sig' };
    const sign = (key: CryptoKey) =>
      new SignJWT({ sub: 'alice' })
        .setProtectedHeader({ alg: 'RS256', kid: 'edge-1' })
        .setIssuer(ISSUER)
        .setAudience('fleet')
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(key);
    token = await sign(privateKey);
    foreign = await sign((await generateKeyPair('RS256')).privateKey);

    const config = parseConfig(
      sims.karmadaConfig({
        authentication: {
          oidc: [{ issuer: ISSUER, audiences: ['fleet'], jwks: { keys: [jwk] }, usernamePrefix: '-' }],
        },
      }),
    );
    platform = nodePlatform(config);
    const fleet = createApp(buildFleet(config, platform));

    const outer = new Hono();
    outer.get('/', (c) => c.text('the outer app'));
    outer.use('/k8s/*', jwt({ secret: jwk, alg: 'RS256' }));
    // counts what got past the outer middleware into the fleet
    outer.use('/k8s/*', async (_c, next) => {
      fleetSaw++;
      await next();
    });
    outer.route('/k8s', fleet);

    const ca = createTestCA();
    caPem = ca.cert;
    const tls = ca.server();
    server = await new Promise<ServerType>((resolve) => {
      const s = serve(
        {
          fetch: outer.fetch,
          hostname: '127.0.0.1',
          port: 0,
          createServer: createHttpsServer,
          serverOptions: { key: tls.key, cert: tls.cert },
        },
        () => resolve(s),
      );
    });
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  const kubectls: Kubectl[] = [];
  /** kubectl against the mounted fleet, with its own kubeconfig (removed after the suite) */
  const kubectl = (token?: string) => {
    const k = new Kubectl(`${url}/k8s`, { caPem, ...(token ? { token } : {}) });
    kubectls.push(k);
    return k;
  };

  /** undici's fetch trusting the test CA */
  const get = async (path: string, auth = true) => {
    const res = await undiciFetch(`${url}${path}`, {
      headers: auth ? { authorization: `Bearer ${token}` } : {},
      dispatcher: new Agent({ connect: { ca: caPem } }),
    });
    return res as unknown as Response;
  };

  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    await platform?.transport.close?.();
    await sims?.close();
    for (const k of kubectls) rmSync(k.dir, { recursive: true, force: true });
  });

  it('kubectl get pods -A through the prefix lists every member’s pods, as the token’s user', async () => {
    const k = kubectl(token);
    const r = await k.run(['get', 'pods', '-A', '-o', 'name', '--request-timeout=30s']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const got = r.stdout.trim().split('\n').sort();
    const want = [...sims.members].flatMap(([cluster, sim]) =>
      sim.list(PODS).map((p) => `pod/${p.metadata.name}.clusterspace.${cluster}`),
    );
    expect(want.length).toBeGreaterThan(0);
    expect(got).toEqual([...new Set(want)].sort());
    // the fleet authenticated the same token and asked every cluster as its user
    const member = sims.members.get('member1')!;
    const asked = member.requests.filter((q) => new URL(q.url).pathname === '/api/v1/pods');
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.at(-1)!.headers['impersonate-user']).toBe('alice');
  }, 60_000);

  it('a request without a valid token stops at hono/jwt and never reaches the fleet', async () => {
    const before = fleetSaw;
    for (const bad of ['not-a-jwt', foreign]) {
      const r = await kubectl(bad).run(['get', 'pods', '-A', '--request-timeout=30s']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('You must be logged in to the server');
    }
    const none = await get('/k8s/api/v1/pods', false);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(fleetSaw).toBe(before);
  }, 60_000);

  it('the fleet answers its own paths below the prefix; the outer app keeps its own', async () => {
    const outerRoot = await get('/', false);
    expect([outerRoot.status, await outerRoot.text()]).toEqual([200, 'the outer app']);
    const probe = await get('/k8s/livez');
    expect([probe.status, await probe.text()]).toEqual([200, 'ok']);
    const k = kubectl(token);
    const v = await k.run(['get', '--raw', '/livez']);
    expect([v.code, v.stdout.trim()]).toEqual([0, 'ok']);
    const missing = await k.run(['get', '--raw', '/no/such/path']);
    expect(missing.stderr).toMatch(/NotFound|not found/i);
    const ns = await k.run(['get', 'namespaces', '-o', 'name']);
    expect(ns.code).toBe(0);
    expect(ns.stdout).toContain('namespace/default');
  }, 60_000);
});
