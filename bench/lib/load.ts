/**
 * The load generator: autocannon's programmatic API with a fixed number of connections for a fixed time.
 *
 * Latencies are taken from autocannon's per-response event and kept exactly (autocannon's own histogram
 * has 1 ms resolution, too coarse for a proxy that should add well under 2 ms).
 */
import autocannon from 'autocannon';
import { percentile, Samples } from './stats.ts';

export interface LoadSpec {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  connections: number;
  durationS: number;
}

export interface LoadResult {
  /** wall time of the run, seconds */
  seconds: number;
  /** 2xx responses */
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** 2xx responses per second */
  rps: number;
  /** response bytes per second (all responses) */
  bytesPerSec: number;
  /** latency of 2xx responses, milliseconds */
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const lat = new Samples();
  let bytes = 0;
  let sum = 0;
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      {
        url: spec.url,
        method: spec.method ?? 'GET',
        headers: spec.headers ?? {},
        connections: spec.connections,
        duration: spec.durationS,
        timeout: 30,
      },
      (err, res) => {
        if (err) return reject(err);
        const seconds = (performance.now() - t0) / 1000;
        const sorted = lat.sorted();
        const statusCodes: Record<string, number> = {};
        for (const [code, s] of Object.entries(res.statusCodeStats ?? {})) statusCodes[code] = s.count;
        resolve({
          seconds,
          ok: lat.length,
          non2xx: res.non2xx,
          errors: res.errors,
          timeouts: res.timeouts,
          statusCodes,
          rps: lat.length / seconds,
          bytesPerSec: bytes / seconds,
          latency: {
            mean: lat.length ? sum / lat.length : Number.NaN,
            p50: percentile(sorted, 50),
            p90: percentile(sorted, 90),
            p99: percentile(sorted, 99),
            max: percentile(sorted, 100),
          },
        });
      },
    );
    inst.on('response', (_client: unknown, status: number, resBytes: number, ms: number) => {
      bytes += resBytes;
      if (status >= 200 && status < 300) {
        lat.push(ms);
        sum += ms;
      }
    });
  });
}
