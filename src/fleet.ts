/**
 * Assembles a fleet from validated configuration and a platform: resolves credentials, builds the
 * upstream client and the membership source. Runs once per process (Node) or isolate (worker).
 */

import { endpointFromKubeconfig } from './config/kubeconfig.ts';
import {
  ConfigError,
  type Endpoint,
  endpointSchema,
  type FleetConfig,
  formatConfigError,
} from './config/schema.ts';
import { resolveSecurityFiles } from './config/security.ts';
import { FleetMetrics } from './metrics/fleet.ts';
import type { Platform } from './platform/types.ts';
import type { FleetDeps } from './types.ts';
import { sharedReadsOver } from './upstreams/cache/shared.ts';
import { UpstreamClient } from './upstreams/client.ts';
import type { ClusterProfileSource, ProviderCredential } from './upstreams/clusterprofiles.ts';
import { type ResolvedEndpoint, resolveEndpoint } from './upstreams/endpoint.ts';
import { Membership, type MembershipSource } from './upstreams/membership.ts';

function controlPlaneEndpoint(config: FleetConfig, platform: Platform): Endpoint {
  const cp = config.controlPlane;
  if (!('kubeconfig' in cp)) return cp;
  const where = 'config.controlPlane.kubeconfig';
  const text = cp.kubeconfig.inline ?? platform.files.readText(cp.kubeconfig.path!, `${where}.path`);
  const baseDir = cp.kubeconfig.path?.includes('/') ? cp.kubeconfig.path.replace(/\/[^/]*$/, '') : undefined;
  const raw = endpointFromKubeconfig(text, { context: cp.kubeconfig.context, baseDir, where });
  const parsed = endpointSchema.safeParse({
    ...raw,
    ...(cp.timeoutSeconds ? { timeoutSeconds: cp.timeoutSeconds } : {}),
  });
  if (!parsed.success) throw new ConfigError(formatConfigError(parsed.error, where));
  return parsed.data;
}

function resolved(
  name: string,
  e: Endpoint,
  config: FleetConfig,
  platform: Platform,
  where: string,
): ResolvedEndpoint {
  let ep: ResolvedEndpoint;
  try {
    ep = resolveEndpoint(name, e, platform.files, config.timeouts.requestSeconds * 1000, where);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message);
  }
  platform.checkEndpoint(ep, where);
  if (ep.insecureSkipTLSVerify)
    console.warn(
      `fleet: WARNING: ${where}: TLS verification is DISABLED (insecureSkipTLSVerify); do not use this in production`,
    );
  return ep;
}

/**
 * Members from a hub's ClusterProfiles: the hub's endpoint (the control plane unless given) and each
 * access provider's fixed credential resolved once, here, like every other file reference.
 */
function clusterProfileSource(
  config: FleetConfig,
  members: Extract<FleetConfig['members'], { mode: 'clusterProfiles' }>,
  controlPlane: ResolvedEndpoint,
  platform: Platform,
): ClusterProfileSource {
  const hub = members.hub
    ? resolved('hub', members.hub, config, platform, 'config.members.hub')
    : controlPlane;
  const providers = members.accessProviders.map((p, i): ProviderCredential => {
    const { name, secretReader, ...credential } = p;
    if (secretReader) return { name, secretReader };
    // the credential alone, resolved as an endpoint's (files read, tokenFile re-read as it rotates)
    const ep = resolved(
      name,
      { server: hub.server, ...credential },
      config,
      platform,
      `config.members.accessProviders[${i}]`,
    );
    return { name, certPem: ep.certPem, keyPem: ep.keyPem, token: ep.token, mtlsBinding: ep.mtlsBinding };
  });
  return {
    mode: 'clusterProfiles',
    refreshMs: members.refreshSeconds * 1000,
    hub,
    namespace: members.namespace,
    clusterManager: members.clusterManager,
    providers,
    timeoutMs: config.timeouts.requestSeconds * 1000,
    check: (ep, where) => platform.checkEndpoint(ep, where),
  };
}

export function buildFleet(input: FleetConfig, platform: Platform): FleetDeps {
  // identity: file references become data; what the runtime cannot do is refused (config/security.ts)
  const config = resolveSecurityFiles(input, platform, (m) => new ConfigError(m));
  // one set of figures per process (Node) or isolate (Workers); every upstream call reports to it
  const metrics = new FleetMetrics();
  // shared reads (config.cache): RV=0 lists and gets, discovery and OpenAPI coalesced (and kept, with a
  // TTL); below the client, so keyed by the identity on the wire; on Workers a shared call is its
  // starting request's I/O
  const transport = sharedReadsOver(platform.transport, config.cache, {
    ...(platform.edgeCache ? { edge: platform.edgeCache } : {}),
    ownerBound: platform.name === 'worker',
    observer: {
      read: (cluster, result) => metrics.sharedReads.inc({ cluster, result }),
      detached: () => metrics.sharedReadsDetached.inc(),
    },
  });
  const client = new UpstreamClient(transport, undefined, {
    call: (cluster, code, seconds, failure, message) =>
      metrics.upstream(cluster, code, seconds, failure, message),
  });
  const controlPlane = resolved(
    'karmada',
    controlPlaneEndpoint(config, platform),
    config,
    platform,
    'config.controlPlane',
  );
  let source: MembershipSource;
  if (config.members.mode === 'karmada') {
    source = { mode: 'karmada', refreshMs: config.members.refreshSeconds * 1000 };
  } else if (config.members.mode === 'clusterProfiles') {
    source = clusterProfileSource(config, config.members, controlPlane, platform);
  } else {
    source = {
      mode: 'static',
      members: config.members.clusters
        .map((m, i) => {
          const where = `config.members.clusters[${i}]`;
          // validated whole with the rest of the configuration (config/schema.ts)
          const { name, ...endpoint } = m;
          return resolved(name, endpoint, config, platform, where);
        })
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    };
  }
  if (config.upstreamIdentity.mode === 'passthrough') {
    // clusters authenticate a client certificate before a bearer token: every caller would act as the fleet
    const withCert = [
      controlPlane,
      ...(source.mode === 'static' ? source.members : []),
      ...(source.mode === 'clusterProfiles' ? [source.hub, ...source.providers] : []),
    ].find((e) => e.certPem || e.mtlsBinding);
    if (withCert)
      throw new ConfigError(
        `config.upstreamIdentity.mode: passthrough forwards the caller's token, but ${withCert.name} is reached with the fleet's client certificate, which clusters authenticate first (every caller would act as the fleet); drop the certificate for that endpoint or use mode impersonate`,
      );
  }
  return {
    config,
    client,
    membership: new Membership(controlPlane, source, client),
    metrics,
    gzipResponses: platform.gzipResponses,
    maxConnectionsPerRequest: config.maxConnectionsPerRequest ?? platform.maxConnectionsPerRequest,
    relay: platform.relay,
    maxClustersPerRequest: config.maxClustersPerRequest ?? platform.maxClustersPerRequest,
  };
}
