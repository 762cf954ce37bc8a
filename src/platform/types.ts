/**
 * The platform seam: the one place where the runtime differs. `node.ts` (imported only by deploy/node and
 * Node-side tests) and `worker.ts` (imported by the worker entry) implement it; nothing else in src/
 * touches a runtime-specific API.
 */

import type { RelayFetcher } from '../types.ts';
import type { FileReader, ResolvedEndpoint } from '../upstreams/endpoint.ts';
import type { Transport } from '../upstreams/transport.ts';

export interface Platform {
  name: 'node' | 'worker';
  files: FileReader;
  transport: Transport;
  /**
   * true when the fleet must gzip large answers itself (Node); false where the runtime compresses
   * responses on its own (Workers encode bodies automatically when the client accepts gzip)
   */
  gzipResponses: boolean;
  /** simultaneous outgoing connections one request may hold (Workers: 6, Node: unbounded) */
  maxConnectionsPerRequest: number;
  /** the fleet's own relay, where the runtime limits connections per request */
  relay?: RelayFetcher;
  /** refuse, at startup, an endpoint the runtime cannot reach as configured (e.g. a private CA on Workers) */
  checkEndpoint(endpoint: ResolvedEndpoint, where: string): void;
}
