/**
 * `npm run start:real`: builds what is missing (testbed/build.ts), starts the real test bed
 * (testbed/bed.ts), prints where to point kubectl, and stops everything on Ctrl-C.
 * PORT picks the port of the fleet a user points kubectl at, as for `npm start`.
 */

import { type Bed, startBed } from './bed.ts';
import { build } from './build.ts';

const log = (line: string) => console.log(`testbed: ${line}`);
const mib = (n: number) => `${Math.round(n / 2 ** 20)} MiB`;

async function main(): Promise<void> {
  const t0 = Date.now();
  await build([], log);
  log(`binaries ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  let bed: Bed | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping the bed …`);
    await bed?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  bed = await startBed({ port: process.env.PORT ? Number(process.env.PORT) : undefined, log });
  const rss = bed.rssBytes();
  const primary = bed.fleets.karmada ?? bed.fleets.direct;
  console.log(`
The real fleet is up (started in ${bed.startSeconds} s; bed processes use ${mib(rss.total)} resident).

  kubectl --kubeconfig ${primary.kubeconfig} get pods -A
${
  bed.fleets.karmada
    ? `\n  direct fleet (static members): kubectl --kubeconfig ${bed.fleets.direct.kubeconfig} get nodes -A\n`
    : ''
}
  fleet ${primary.name}: ${primary.url} (configuration: ${primary.configFile})
${bed.members.map((m) => `  ${m.name}: ${m.apiserver.url}  kubectl --kubeconfig ${m.apiserver.adminKubeconfig} …`).join('\n')}
  karmada-apiserver: ${bed.karmadaApiserver.url}  kubectl --kubeconfig ${bed.karmadaApiserver.adminKubeconfig} …
  logs: .cache/testbed/run/<name>/

Ctrl-C stops everything.`);
}

main().catch((e) => {
  console.error(`testbed: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
});
