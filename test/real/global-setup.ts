/**
 * `npm run test:real`'s global setup: extracts kubectl, builds the bed's binaries (testbed/build.ts, a no-op
 * when current) and starts the real test bed once (testbed/bed.ts); the suites get what they need to reach
 * it through `inject('bed')` (test/real/bed.ts). Stopped when the run ends.
 */
import type { TestProject } from 'vitest/node';
import { ensureKubectl } from '../../scripts/kubectl.mjs';
import { FLEET_USER, startBed } from '../../testbed/bed.ts';
import { build } from '../../testbed/build.ts';
import type { BedInfo } from './bed.ts';

/** the users the suites act as besides bed-admin, with their groups (test/real/karmada.test.ts: identity) */
const SUITE_USERS: Record<string, string[]> = {
  'karmada-reader': [],
  'karmada-grouped': ['karmada-proxy-group'],
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureKubectl();
  const log = (line: string) => console.log(`testbed: ${line}`);
  await build([], log);
  const bed = await startBed({ log, clusterProfiles: true });
  const rss = bed.rssBytes();
  log(`bed up in ${bed.startSeconds} s, ${Math.round(rss.total / 2 ** 20)} MiB resident`);
  const fleet = (f: typeof bed.fleets.direct) => ({ name: f.name, url: f.url, kubeconfig: f.kubeconfig });
  const admin = bed.user('bed-admin', ['system:masters']);
  const pair = (p: { cert: string; key: string }) => ({ cert: p.cert, key: p.key });
  const info: BedInfo = {
    fleets: {
      direct: fleet(bed.fleets.direct),
      karmada: fleet(bed.fleets.karmada),
      ...(bed.fleets.clusterProfiles ? { clusterProfiles: fleet(bed.fleets.clusterProfiles) } : {}),
    },
    fleetCA: bed.fleetCA.cert,
    admin,
    users: Object.fromEntries(Object.entries(SUITE_USERS).map(([u, groups]) => [u, bed.user(u, groups)])),
    members: bed.members.map((m) => ({
      name: m.name,
      url: m.apiserver.url,
      ca: m.apiserver.ca,
      kubeconfig: m.apiserver.adminKubeconfig,
      admin: { cert: m.apiserver.admin.cert, key: m.apiserver.admin.key },
      logLine: m.kwok.logLine,
      logsFile: m.kwok.logsFile,
      fleetCert: pair(m.apiserver.pki.client(FLEET_USER)),
    })),
    karmadaApiserver: {
      name: bed.karmadaApiserver.name,
      url: bed.karmadaApiserver.url,
      ca: bed.karmadaApiserver.ca,
      kubeconfig: bed.karmadaApiserver.adminKubeconfig,
      admin: { cert: bed.karmadaApiserver.admin.cert, key: bed.karmadaApiserver.admin.key },
      logLine: '',
      logsFile: '',
      fleetCert: pair(bed.karmadaApiserver.pki.client(FLEET_USER)),
    },
    etcdUrl: bed.etcd.url,
  };
  project.provide('bed', info);
  return () => bed.stop();
}
