/**
 * The worker side of the platform seam (see ./types.ts): Workers' `fetch`, plus `mtls_certificates`
 * bindings for client certificates. What the platform cannot do per request is refused at startup with
 * a message saying what to do instead.
 */
import { ConfigError } from '../config/schema.ts';
import { type Fetcher, fetchTransport } from '../upstreams/transport.ts';
import type { Platform } from './types.ts';

/** The service binding to the fleet's own `FleetRelay` entrypoint (see wrangler.toml). */
export const RELAY_BINDING = 'FLEET_RELAY';

export function workerPlatform(env: Record<string, unknown>): Platform {
  const relayBinding = env[RELAY_BINDING] as { fetch(req: Request): Promise<Response> } | undefined;
  const fetchers: Record<string, Fetcher> = {};
  for (const [k, v] of Object.entries(env)) {
    const f = (v as { fetch?: unknown } | null)?.fetch;
    if (typeof f === 'function') fetchers[k] = (input, init) => (f as Fetcher).call(v, input, init);
  }
  return {
    name: 'worker',
    files: {
      readText(path, field) {
        throw new ConfigError(
          `${field}: the worker runtime has no files (${path}); inline the data (…Data fields, token, or kubeconfig.inline)`,
        );
      },
    },
    transport: fetchTransport((input, init) => fetch(input, init), fetchers),
    gzipResponses: false,
    // Workers: 6 simultaneous open connections per request; wider fan-outs go through the relay
    maxConnectionsPerRequest: 6,
    relay: relayBinding ? (req) => relayBinding.fetch(req) : undefined,
    checkEndpoint(ep, where) {
      if (ep.caPem)
        throw new ConfigError(
          `${where}: the worker runtime cannot trust a private CA per request; serve the upstream with a publicly trusted certificate, or run the Node container`,
        );
      if (ep.insecureSkipTLSVerify && ep.server.startsWith('https:'))
        throw new ConfigError(`${where}.insecureSkipTLSVerify: the worker runtime always verifies TLS`);
      if ((ep.certPem || ep.keyPem) && !ep.mtlsBinding)
        throw new ConfigError(
          `${where}: the worker runtime presents client certificates only through an mtls_certificates binding; upload the certificate and set mtlsCertificateBinding`,
        );
      if (ep.mtlsBinding && !fetchers[ep.mtlsBinding])
        throw new ConfigError(
          `${where}.mtlsCertificateBinding: no binding named "${ep.mtlsBinding}" in the worker's env`,
        );
    },
  };
}
