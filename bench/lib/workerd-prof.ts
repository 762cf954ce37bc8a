import { resolve } from 'node:path';
import { buildWorker } from '../../scripts/build-worker.mjs';
import { cannedFleetConfig, startCanned } from './canned.ts';
import { CdpSession } from './cdp.ts';
import { processCpuMs } from './stats.ts';
import { startWorkerdFleet } from './workerd.ts';

const [bundleArg, answersS = '5', podsS = '1000', path = '/api/v1/pods'] = process.argv.slice(2);
let scriptPath = bundleArg ? resolve(bundleArg) : resolve('.cache/workerd-prof/worker.js');
if (!bundleArg || bundleArg === '-') {
  scriptPath = resolve('.cache/workerd-prof/worker.js');
  await buildWorker(scriptPath);
}
const canned = await startCanned(2);
const reply = await canned.serve({ clusters: 10, pods: Number(podsS), latencyMs: 20 });
const { mf, url, pid } = await startWorkerdFleet(scriptPath, JSON.stringify(cannedFleetConfig(reply.urls)), {
  inspectorPort: 0,
});
const cpu = (p: number) => processCpuMs(p) ?? Number.NaN;
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
try {
  const ask = async () => {
    const res = await fetch(`${url}${path}`, { headers: { accept: 'application/json' } });
    return (await res.arrayBuffer()).byteLength;
  };
  await ask();
  await ask();
  const cdp = await CdpSession.connect((await mf.getInspectorURL()) as URL, 'core:user:fleet');
  await cdp.call('Profiler.enable');
  await cdp.call('Profiler.setSamplingInterval', { interval: 100 });
  await cdp.call('Profiler.start');
  const c0 = cpu(pid);
  let bytes = 0;
  for (let a = 0; a < Number(answersS); a++) bytes += await ask();
  const c1 = cpu(pid);
  const { profile } = await cdp.call<{
    profile: { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };
  }>('Profiler.stop', {}, 60_000);
  cdp.close();
  const mib = bytes / 2 ** 20;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // native frames (no url) are charged to their nearest JavaScript caller too, in a second table
  const byCaller = new Map<string, number>();
  const self = new Map<string, number>();
  let total = 0;
  for (const [k, id] of profile.samples.entries()) {
    const dt = (profile.timeDeltas[k + 1] ?? 0) / 1000;
    const n = byId.get(id)!;
    const f = n.callFrame;
    const key = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    if (!f.url && !f.functionName.startsWith('(')) {
      let p = parent.get(id);
      while (p !== undefined && !byId.get(p)!.callFrame.url) p = parent.get(p);
      const c = p === undefined ? '(root)' : byId.get(p)!.callFrame;
      const ck =
        typeof c === 'string'
          ? c
          : `${c.functionName || '(anon)'} ${c.url.split('/').pop()}:${c.lineNumber + 1}`;
      byCaller.set(`${key} <- ${ck}`, (byCaller.get(`${key} <- ${ck}`) ?? 0) + dt);
    }
    if (!['(idle)', '(program)'].includes(f.functionName)) total += dt;
  }
  console.log(
    `${scriptPath} ${path}: ${(bytes / answers()).toFixed(0)} B per answer; process CPU ${((c1 - c0) / mib).toFixed(1)} ms/MiB; V8 samples outside idle/program ${(total / mib).toFixed(1)} ms/MiB`,
  );
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${(v / mib).toFixed(2).padStart(7)} ms/MiB  ${k}`);
  console.log('native frames by their JavaScript caller:');
  for (const [k, v] of [...byCaller].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`  ${(v / mib).toFixed(2).padStart(7)} ms/MiB  ${k}`);
} finally {
  await mf.dispose();
  await canned.stop();
}
function answers() {
  return Number(answersS);
}
process.exit(0);
