/**
 * A load of whole answers rather than of requests: each target is a way of getting one answer, made of one
 * or more GETs sent one after another (a fleet list is one GET; listing ten clusters the way Karmada's
 * search proxy does today is ten). Every body is read to its end and counted, never kept. Targets are
 * interleaved answer by answer (the order rotating), so that on a noisy machine they share the same noise.
 *
 * Runs in the load process. Per answer: wall time to the last byte, time to the first body byte, bytes,
 * and optionally the CPU time other processes spent meanwhile (from /proc: the fleet's work per answer).
 */
import { Agent, request } from 'undici';
import { processCpuMs } from './stats.ts';

export interface Step {
  url: string;
  headers?: Record<string, string>;
}

export interface SequenceTarget {
  name: string;
  steps: Step[];
  /** send the steps all at once instead of one after another (the answer is complete when all are) */
  parallel?: boolean;
}

export interface SequenceSpec {
  targets: SequenceTarget[];
  /** answers per target */
  iterations: number;
  /** unmeasured answers per target first */
  warmup?: number;
  /** processes whose CPU time is recorded per answer (by label) */
  cpuPids?: Record<string, number>;
  /** count occurrences of this string in every body (e.g. one field every item has once) */
  countPattern?: string;
  /** how many of the last bytes of the (last step's) body to keep, to check how it ends */
  keepTail?: number;
  /** per-request timeout, ms (default 300 s: a 10 × 10,000-pod list can take a while) */
  timeoutMs?: number;
}

export interface AnswerSample {
  ms: number;
  /** first body byte of the first step */
  firstByteMs: number;
  bytes: number;
  count: number;
  /** CPU ms per labelled process */
  cpuMs: Record<string, number>;
  failed?: string;
}

export interface SequenceResult {
  name: string;
  samples: AnswerSample[];
  tail?: string;
}

function rotate<T>(xs: T[], by: number): T[] {
  const k = xs.length ? by % xs.length : 0;
  return [...xs.slice(k), ...xs.slice(0, k)];
}

/** Counts `pattern` across chunk boundaries. */
class Counter {
  n = 0;
  private carry = '';
  constructor(private readonly pattern: string) {}
  push(chunk: Buffer): void {
    if (!this.pattern) return;
    const s = this.carry + chunk.toString('latin1');
    let i = s.indexOf(this.pattern);
    while (i >= 0) {
      this.n++;
      i = s.indexOf(this.pattern, i + this.pattern.length);
    }
    this.carry = s.slice(Math.max(0, s.length - this.pattern.length + 1));
  }
}

let agent: Agent | undefined;

async function answer(
  t: SequenceTarget,
  spec: SequenceSpec,
): Promise<{ sample: AnswerSample; tail: string }> {
  agent ??= new Agent({ keepAliveTimeout: 30_000, connections: 64 });
  const cpu0: Record<string, number | null> = {};
  for (const [k, pid] of Object.entries(spec.cpuPids ?? {})) cpu0[k] = processCpuMs(pid);
  const counter = new Counter(spec.countPattern ?? '');
  const keep = spec.keepTail ?? 0;
  let tail = Buffer.alloc(0);
  let bytes = 0;
  let firstByteMs = Number.NaN;
  let failed: string | undefined;
  const t0 = performance.now();
  const one = async (step: Step) => {
    try {
      const res = await request(step.url, {
        method: 'GET',
        headers: step.headers ?? {},
        dispatcher: agent,
        headersTimeout: spec.timeoutMs ?? 300_000,
        bodyTimeout: spec.timeoutMs ?? 300_000,
      });
      if (res.statusCode < 200 || res.statusCode > 299) {
        const text = await res.body.text();
        failed ??= `${step.url}: HTTP ${res.statusCode} ${text.slice(0, 200)}`;
        return;
      }
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        if (Number.isNaN(firstByteMs)) firstByteMs = performance.now() - t0;
        bytes += chunk.length;
        counter.push(chunk);
        if (keep) tail = Buffer.concat([tail, chunk]).subarray(-keep);
      }
    } catch (e) {
      failed ??= `${step.url}: ${(e as Error).message}`;
    }
  };
  if (t.parallel) await Promise.all(t.steps.map(one));
  else for (const step of t.steps) await one(step);
  const ms = performance.now() - t0;
  const cpuMs: Record<string, number> = {};
  for (const [k, pid] of Object.entries(spec.cpuPids ?? {})) {
    const a = cpu0[k];
    const b = processCpuMs(pid);
    if (a != null && b !== null) cpuMs[k] = b - a;
  }
  return {
    sample: { ms, firstByteMs, bytes, count: counter.n, cpuMs, ...(failed ? { failed } : {}) },
    tail: tail.toString('utf8'),
  };
}

export async function runSequences(spec: SequenceSpec): Promise<SequenceResult[]> {
  const out = new Map<string, SequenceResult>(
    spec.targets.map((t) => [t.name, { name: t.name, samples: [] }]),
  );
  for (let i = 0; i < (spec.warmup ?? 0); i++) for (const t of rotate(spec.targets, i)) await answer(t, spec);
  for (let i = 0; i < spec.iterations; i++) {
    for (const t of rotate(spec.targets, i)) {
      const { sample, tail } = await answer(t, spec);
      const r = out.get(t.name)!;
      r.samples.push(sample);
      if (spec.keepTail) r.tail = tail;
    }
  }
  return [...out.values()];
}
