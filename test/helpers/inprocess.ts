/**
 * The fleet app wired to simulated clusters in-process (no sockets): for property-style tests that run
 * hundreds of requests. The transport is the Fetch one the worker uses, routed by host to each sim.
 */

import { createSimFleet, type SimCluster, type SimKarmada } from '../../sim/index.ts';
import { createApp } from '../../src/app.ts';
import { type FleetConfigInput, parseConfig } from '../../src/config/schema.ts';
import { buildFleet } from '../../src/fleet.ts';
import type { Platform } from '../../src/platform/types.ts';
import { fetchTransport } from '../../src/upstreams/transport.ts';

export interface InProcessFleet {
  karmada: SimKarmada;
  members: Map<string, SimCluster>;
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

export function inProcessFleet(
  opts: { members?: string[]; seed?: boolean; crdMembers?: string[] } = {},
  extra: Partial<FleetConfigInput> = {},
): InProcessFleet {
  const { karmada, members } = createSimFleet(opts);
  const byHost = new Map<string, SimCluster>([['karmada.sim', karmada]]);
  for (const [n, s] of members) byHost.set(`${n}.sim`, s);
  const platform: Platform = {
    name: 'worker',
    files: {
      readText() {
        throw new Error('no files in-process');
      },
    },
    transport: fetchTransport(async (input, init) => {
      const sim = byHost.get(new URL(input).host);
      if (!sim) throw new TypeError(`fetch failed: no host ${input}`);
      return sim.fetch(new Request(input, init));
    }),
    gzipResponses: true,
    maxConnectionsPerRequest: Number.POSITIVE_INFINITY,
    checkEndpoint() {},
  };
  const config = parseConfig({
    controlPlane: { server: 'http://karmada.sim' },
    authentication: { anonymous: { enabled: true } },
    members: {
      mode: 'static',
      clusters: [...members.keys()].map((n) => ({ name: n, server: `http://${n}.sim` })),
    },
    ...extra,
  });
  const app = createApp(buildFleet(config, platform));
  return {
    karmada,
    members,
    fetch: async (path, init) => app.fetch(new Request(`http://fleet.test${path}`, init)),
  };
}
