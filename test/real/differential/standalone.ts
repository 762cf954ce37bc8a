/**
 * The differential check without the whole bed, for working on sim/: one real kube-apiserver 1.35 with its
 * kube-controller-manager on the bed's built binaries (testbed/kube.ts), one simulated member, the same
 * catalogue and allow-list as differential.test.ts. Prints the counts and writes every difference found to
 * .cache/differential/found.txt (the ones not allowed to unexpected.txt); exits 1 when one is not allowed.
 *
 *   timeout 900 npx tsx test/real/differential/standalone.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { serveSim } from '../../../deploy/node/demo.ts';
import { SimCluster } from '../../../sim/index.ts';
import { startApiserver, startControllerManager, startEtcd } from '../../../testbed/kube.ts';
import { ALLOWED } from './allowed.ts';
import { closeAgents, type Target } from './client.ts';
import { check, prepare } from './runner.ts';

async function until<T>(what: string, f: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in 120 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const etcd = await startEtcd({ name: 'differential-etcd' });
const api = await startApiserver({ name: 'differential', etcd });
const cm = await startControllerManager(api);
const sim = new SimCluster({ name: 'differential', seed: false });
const served = await serveSim(sim);
let failed = false;
try {
  const simT: Target = { name: 'sim', url: served.url };
  const realT: Target = {
    name: 'real',
    url: api.url,
    tls: { ca: api.ca, cert: api.admin.cert, key: api.admin.key },
  };
  // a letter first, as in differential.test.ts (an id like 28e425 is a number to a YAML 1.2 reader)
  const id = `r${Math.random().toString(16).slice(2, 8)}`;
  const { ctx, onlyReal, onlySim } = await prepare(simT, realT, `diff-${id}`, id, until);
  const started = Date.now();
  const { cases, found } = await check(simT, realT, ctx);
  found.unshift(...onlySim.map((k) => `discovery: ${k}: sim serves it, real does not`));
  const unexpected = found.filter((f) => !ALLOWED.some((a) => a.at.test(f)));
  mkdirSync('.cache/differential', { recursive: true });
  writeFileSync('.cache/differential/found.txt', `${found.join('\n')}\n`);
  writeFileSync('.cache/differential/unexpected.txt', `${unexpected.join('\n')}\n`);
  console.log(`skipped, the simulator does not serve (${onlyReal.length}): ${onlyReal.join(' ')}`);
  console.log(
    `${cases} cases in ${Math.round((Date.now() - started) / 1000)} s: ${found.length} differences, ` +
      `${found.length - unexpected.length} allowed, ${unexpected.length} not (.cache/differential/)`,
  );
  failed = unexpected.length > 0;
} finally {
  closeAgents();
  await served.close(100);
  sim.close();
  await cm.stop();
  await api.stop();
  await etcd.stop();
}
process.exit(failed ? 1 : 0);
