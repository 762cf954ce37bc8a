/**
 * The cost of authentication per request: the same small GET through the same fleet process, once with no
 * credential (anonymous: no verification) and once with an RS256 OIDC bearer token (signature, issuer,
 * audience and expiry verified on every request against the cached JWKS, the fleet's steady state after
 * the first fetch). Same run, same process, interleaved: the difference in CPU per request and latency is
 * what JWT verification costs.
 *
 * The benchmark issuer's key is fixed (below) so that the harness (which signs the token) and the upstream
 * process (which serves the JWKS the fleet fetches) agree without passing keys around. It protects nothing.
 */
import { exportJWK, importJWK, SignJWT } from 'jose';
import { serveFetch } from '../../deploy/node/http.ts';
import type { FleetConfigInput } from '../../src/config/schema.ts';
import { configmapCase, NAMESPACE, passthroughTargets } from './passthrough.ts';
import type { BenchCase } from './types.ts';

const ISSUER = 'https://issuer.bench.fleet-apiserver.invalid';
const AUDIENCE = 'fleet-bench';
const KID = 'bench-1';

/** RSA 2048 (RS256, what most OIDC providers sign with); for this benchmark only. */
const BENCH_KEY = {
  kty: 'RSA',
  n: 'tBBAQGmcnvjfTv3Z-hJ0WXJvPaVfaCq7fx1GjgCfFog0RJCtSozIl4ilNjZbnY_54-CSJd_vecGvF0Bmy0bfRbdtm1afYK1A3LN2B8bW_nCZCz-VvaoMlKhboNYpK0xiFjNuWT3RsMQY164kWM08DeSLLblZNalAXeuXs2uldNiR4BRmYLv_NLL2bLZzqd6ktSlg5LvCceVYzwotCjYO9Av0eAGUetV7d7OwsXHGqXFH0Y8OWyPmNhQFZI6u8ZAFOlj_aHNQbOFafgdcdCQ3_HhVAX7SaJnSKTd5sAf1bghPps_qj3dc-jA0Ez0qtj-2tiqKBYqwEGRFO0YMRk6N9w',
  e: 'AQAB',
  d: 'Cs6a4wLNTEFI1Dd2-LcloosaubF0odtGuGD41hcCQidXzVgXMbOnamjghmA9OWsY89NYeJhEvQlur8-R6KUCGFYWm82KihJIvU_lrdI1hYnoG_1R-5_6jbi_eLTB12ZuakF_kv2bc0Ehvvglseq6rjH6vhP_-ORSoUOj-p6Wv9Krb6jCeWYnIhJ3S0AWU4_xcX_wnQSxA3YOHuTBHrhcsIv3hIIjCieWVoln01gr9cC11SIgXt10vs7rv1TffYRvsRt0SMRcL7AKjtu8RRWzp-65mKBK2eSXOa6ASuWd07Jw--66q94HUGB5fsuMQ5YbUG84eIdifMJ4Q4ylp3OraQ',
  p: '7WY1GbpeqC2RVzmtwmQPAcagsZR3tJ0iV_bjmoNAc7-EwwZIoltJ1UiiPgvOjYRWe6lJCW4H_rfNdayXZNX9mPkOeaNchNd8A6jop-FKJbuSTvdffERAnHBIOhjDoDZAx5SvsY2HdUN3-a7OvdN7dtkj_4_Qvuvm_nkYnjTAv40',
  q: 'wiv-UpaS1IHrDtYVLVGjhbuCapnXs2GFKXkO_4mVXCUjfmuWiG84Ggz7I74snvrPCoSDQZWv2gr0xGTW_lnZSQxoW4DQPA7aaJ6w3_hYWbaO15laTBgSK3yOA97JaGkBFhJuT04yFVmcmhY2BR7n4fpAmgSleoZTbRQY96l20JM',
  dp: 'tl1VXTY1kKuwgnjkaffDL3IN71xFuJEc2MXngcJhuIjey5IAKfhGd3kcaN1ZBo0qgkRAvuWvbpRzWHoEsolQDjsES5yabdG6inUuhAgklWfJtK-CwksL9yCp2zc6z8_dY3Nso9A8xm_Vsg_-8QOMTHfxl1g62u8Mu1768k1D4-E',
  dq: 'ittRNZiOikAaa_K3FECksxdEDZ3U_mgIBX-YNTAbytiYSGkCLrFyqlaMJqRyXoK4Gypmfzlfl4tsPSJsCVsRo0anPoCg6cIpeNW7YX_FFusRvabiRzaTj9uz55qj5_Hnn_QwRLCD6na6IgsuOH1AkH8ZQct-119GO-Q6cqoS2Nc',
  qi: 'wewasbmwx133U4jZdqIQihqd4r3IWAbXNyoaX93GlalZxmWQ4s7IrWEJg8PSpMomE2f4B4AJQL5iPXNECxY9U4LT6JY0s_Rz7i1rjwcuPWsmxuFiVQj438tpH5wjAEma4tpqnNgygUjzi77slY7v-ZvYmXHwcZDtbuwv2nuEq8U',
};

/**
 * The authentication section the benchmark fleets run with: anonymous (the other cases send no credential)
 * plus the benchmark issuer, whose JWKS is served from this process (the upstream one) over HTTP.
 */
export async function benchAuthentication(): Promise<NonNullable<FleetConfigInput['authentication']>> {
  const pub = await importJWK({ kty: BENCH_KEY.kty, n: BENCH_KEY.n, e: BENCH_KEY.e }, 'RS256', {
    extractable: true,
  });
  const jwks = { keys: [{ ...(await exportJWK(pub)), kid: KID, alg: 'RS256', use: 'sig' }] };
  const served = await serveFetch(() => Response.json(jwks));
  return {
    anonymous: { enabled: true },
    // every request verifies its token (kube-apiserver and the fleet default to a 10 s success cache; a
    // cache hit costs one SHA-256 of the token)
    tokenCacheSeconds: 0,
    oidc: [
      {
        issuer: ISSUER,
        audiences: [AUDIENCE],
        jwksUrl: `${served.url}/jwks`,
        usernamePrefix: 'bench:',
        groupsClaim: 'groups',
        groupsPrefix: 'bench:',
      },
    ],
  };
}

async function benchToken(): Promise<string> {
  const key = await importJWK(BENCH_KEY, 'RS256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'bench-user', groups: ['dev', 'ops'] })
    .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + 24 * 3600)
    .sign(key);
}

export const authnCase: BenchCase = {
  name: 'authn-jwt',
  title: `GET one small ConfigMap: anonymous vs an RS256 OIDC token verified per request (cached JWKS)`,
  setup: configmapCase.setup,
  teardown: configmapCase.teardown,
  async targets(env) {
    const all = await passthroughTargets(env, `/api/v1/namespaces/${NAMESPACE}/configmaps/small`);
    const fleet = all.find((t) => t.name === 'fleet');
    if (!fleet) return all;
    fleet.note = 'fleet, no credential (anonymous: nothing to verify)';
    const token = await benchToken();
    return [
      ...all.filter((t) => t.name !== 'fleet-karmada'),
      {
        ...fleet,
        name: 'fleet-jwt',
        headers: { ...fleet.headers, Authorization: `Bearer ${token}` },
        note: 'fleet, RS256 bearer token verified per request (JWKS cached)',
      },
    ];
  },
};
