/**
 * Where a merged list's process CPU goes, kernel included (issue 33: the fleet's CPU above the floor's),
 * sampled by Linux perf (on-CPU time only: a V8 profile counts a syscall's wall time, preemption by the
 * processes it wakes included, which made socket writes look 2x their CPU on this loaded 2-core machine).
 * One bundle run with --perf-basic-prof over canned 10×pods; `perf record -g -p <fleet>` while it answers;
 * each sample given to the first frame up its stack that belongs to a part (JavaScript frames mapped to
 * their sources through the bundle's source map): the scanner, the rewriting, the assembly (merge loop,
 * ByteSink copies), the output write (server writer, Web stream, ServerResponse, socket writes and the
 * kernel's send), the upstream read (socket reads and the kernel's receive, the h1 call, pulled reader,
 * split driver), GC, and the rest.
 *   node --import tsx bench/lib/listout-perf.ts json 1000 10 dist/node/main.js [top=30]
 *   FLOOR_CLIENT=request FLOOR_WRITE=piece node --import tsx bench/lib/listout-perf.ts json 1000 10 \
 *     bench/lib/floor-proxy.mjs                                  # the floor proxy sampled the same way
 * LISTOUT_WARM: answers before sampling (default 10).
 * Needs perf (and kernel.perf_event_paranoid ≤ 2 for one's own processes).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { startFleetProcess } from './fleetproc.ts';

const [form = 'json', podsS = '1000', nS = '10', bundle = 'dist/node/main.js', topS = 'top=30'] =
  process.argv.slice(2);
/** answers before the samples: V8 still optimizes through the first ten or so (none deoptimized after) */
const WARM = Number(process.env.LISTOUT_WARM ?? 10);
const pods = Number(podsS);
const n = Number(nS);
const top = Number(topS.slice(4));
const accept = form === 'table' ? 'application/json;as=Table;v=v1;g=meta.k8s.io' : 'application/json';

function get(url: string): Promise<number> {
  return new Promise((res, rej) => {
    request(url, { headers: { accept } }, (r) => {
      let bytes = 0;
      r.on('data', (d: Buffer) => {
        bytes += d.length;
      });
      r.on('end', () => res(bytes));
      r.on('error', rej);
    })
      .on('error', rej)
      .end();
  });
}

const map = bundle.endsWith('.mjs')
  ? undefined
  : new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')));
const bundleName = bundle.replace(/^.*\//, '');
const cache = new Map<string, string>();
/** a perf frame's symbol with a bundle position mapped to its source file */
function frameName(sym: string): string {
  let s = cache.get(sym);
  if (s !== undefined) return s;
  s = sym;
  const m = /^(.*?)(\S*\/([^/\s]+)):(\d+):(\d+)$/.exec(sym);
  if (map && m && m[3] === bundleName) {
    // findEntry counts lines and columns from 0; perf's map names them from 1
    const p = map.findEntry(Number(m[4]) - 1, Number(m[5]) - 1) as {
      originalSource?: string;
      originalLine?: number;
    };
    s = `${m[1]}${(p.originalSource ?? '?').replace(/^.*?\/(src|deploy|bench)\//, '$1/')}:${(p.originalLine ?? -1) + 1}`;
  }
  cache.set(sym, s);
  return s;
}

const PARTS: Array<[string, RegExp]> = [
  ['kernel softirq (loopback delivery, in whatever ran)', /^(handle_softirqs|do_softirq|net_rx_action)/],
  ['context switch', /^(finish_task_switch|schedule|__schedule)/],
  [
    'GC',
    /^(v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|ConcurrentMarking|MinorMarkCompact|GCTracer|IncrementalMarking|MemoryAllocator|ScavengeJob|ArrayBufferSweeper|MinorGCJob|StressScavenge|LocalHeap|PagedSpace|NewSpace|SemiSpace|ConcurrentAllocator|MainAllocator)|v8::internal::\w*(Scavenge|Marking|Evacuat|Sweep)|Builtins_RecordWrite)/,
  ],
  ['scanner', /src\/merge\/jsonsplit\/|^\*?wasm-function|wasm:\/\//],
  ['rewrite', /src\/merge\/(itembytes|names|rv|table|objects)\//],
  ['assembly (merge loop, ByteSink copies)', /src\/list\/merge\.ts|src\/util\/bytes\.ts/],
  [
    'output write',
    /deploy\/node\/|src\/list\/route\.ts|node:_http_outgoing|node:_http_server|node:internal\/webstreams|node:internal\/streams\/writable|\b(writevGeneric|writeGeneric|handleWriteReq)\b|StreamBase::Writev|StreamBase::Write|LibuvStreamWrap::DoTryWrite|uv_try_write|uv__try_write|uv__write\b|__x64_sys_writev|__x64_sys_write\b|do_writev/,
  ],
  [
    'upstream read',
    /src\/platform\/node-(h1-call|list|dispatch)|src\/util\/pulled|src\/list\/(read|resume)\.ts|\bonStreamRead\b|uv__read|uv__stream_io|__x64_sys_read\b|__x64_sys_recvfrom|tcp_recvmsg|LibuvStreamWrap::OnUvRead|EmitRead/,
  ],
  [
    'JIT compile (background)',
    /^v8::internal::(compiler::|maglev::|OptimizingCompileDispatcher|Compiler::|Parser|PreParser)|^Builtins_CompileLazy/,
  ],
  [
    'malloc/free (caller unknown: no frame pointers)',
    /^(_int_malloc|_int_free|unlink_chunk|malloc|free|cfree|__libc_malloc|__libc_free|malloc_consolidate)/,
  ],
  ['event loop, syscalls not listed', /uv__io_poll|epoll_wait|uv_run/],
];

const dir = mkdtempSync(join(tmpdir(), 'listout-perf-'));
const canned = await startCanned();
let mib = 0;
const data = join(dir, 'perf.data');
try {
  const reply = await canned.serve({ clusters: 10, pods, latencyMs: 20 });
  const f = await startFleetProcess(cannedFleetConfig(reply.urls), {
    bundle,
    // the floor proxy (./floor-proxy.mjs) may stand for the fleet: FLOOR_CLIENT, FLOOR_WRITE as floor-ab's
    env: {
      FLOOR_CLIENT: process.env.FLOOR_CLIENT ?? 'request',
      FLOOR_WRITE: process.env.FLOOR_WRITE ?? 'piece',
    },
    nodeArgs: ['--perf-basic-prof-only-functions', '--interpreted-frames-native-stack'],
  });
  try {
    for (let i = 0; i < WARM; i++) await get(`${f.url}/api/v1/pods`);
    const rec = spawn('perf', ['record', '-F', '1999', '-g', '-p', String(f.pid), '-o', data], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    rec.stderr.on('data', (d) => {
      err += d;
    });
    await new Promise((r) => setTimeout(r, 500));
    let bytes = 0;
    for (let i = 0; i < n; i++) bytes += await get(`${f.url}/api/v1/pods`);
    mib = bytes / 2 ** 20;
    rec.kill('SIGINT');
    await new Promise((r) => rec.once('exit', r));
    if (err.includes('rror')) console.error(err);
  } finally {
    f.stop();
  }
} finally {
  await canned.stop();
}

const script = execFileSync('perf', ['script', '-i', data, '-F', 'ip,sym'], {
  maxBuffer: 1 << 30,
  encoding: 'utf8',
});
const parts = new Map<string, number>();
const leaf = new Map<string, number>();
const byJs = new Map<string, number>();
let total = 0;
for (const block of script.split('\n\n')) {
  const frames = block
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => frameName(l.replace(/^[0-9a-f]+\s+/, '')));
  if (frames.length === 0) continue;
  total++;
  let part = 'other';
  for (const fr of frames) {
    const hit = PARTS.find(([, re]) => re.test(fr));
    if (hit) {
      part = hit[0];
      break;
    }
  }
  parts.set(part, (parts.get(part) ?? 0) + 1);
  const k = `${frames[0]}${part === 'other' ? ` < ${frames.slice(1, 4).join(' < ')}` : ''} [${part}]`;
  leaf.set(k, (leaf.get(k) ?? 0) + 1);
  // the nearest JavaScript frame: what a builtin or a native call was called for
  const js = frames.find((fr) => fr.startsWith('JS:')) ?? '(no JavaScript frame)';
  const kj = `${js} [${part}]`;
  byJs.set(kj, (byJs.get(kj) ?? 0) + 1);
}
console.log(
  `${data}: ${total} samples at 1999 Hz over ${mib.toFixed(1)} MiB answered (${n} answers, ${form} 10×${pods})`,
);
const msPerMiB = (c: number) => ((c / 1999) * 1000) / mib;
for (const [k, c] of [...parts].sort((a, b) => b[1] - a[1]))
  console.log(
    `  ${msPerMiB(c).toFixed(2).padStart(6)} ms/MiB  ${((c / total) * 100).toFixed(1).padStart(5)}%  ${k}`,
  );
console.log(`  ${msPerMiB(total).toFixed(2).padStart(6)} ms/MiB  total on CPU`);
console.log('hottest leaves:');
for (const [k, c] of [...leaf].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`  ${((c / total) * 100).toFixed(2).padStart(6)}%  ${k}`);
console.log('by nearest JavaScript frame (self and below):');
for (const [k, c] of [...byJs].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`  ${((c / total) * 100).toFixed(2).padStart(6)}%  ${k}`);
process.exit(0);
