/**
 * `npm run test:real`'s global setup: extracts kubectl, builds the bed's binaries (testbed/build.ts, a no-op
 * when current) and starts the real test bed once (testbed/bed.ts); the suites get what they need to reach
 * it through `inject('bed')` (test/real/bed.ts). Stopped when the run ends.
 */
import type { TestProject } from 'vitest/node';
import { buildWorker } from '../../scripts/build-worker.mjs';
import { ensureKubectl } from '../../scripts/kubectl.mjs';
import { FLEET_USER, startBed } from '../../testbed/bed.ts';
import { build } from '../../testbed/build.ts';
import { WORKER_BUNDLE } from '../helpers/global-setup.ts';
import type { BedInfo } from './bed.ts';

/** the users the suites act as besides bed-admin, with their groups (test/real/karmada.test.ts: identity) */
const SUITE_USERS: Record<string, string[]> = {
  'karmada-reader': [],
  'karmada-grouped': ['karmada-proxy-group'],
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureKubectl();
  // the worker bundle, for the workerd fleet in front of the bed (test/real/workerd.test.ts)
  await buildWorker(WORKER_BUNDLE);
  const log = (line: string) => console.log(`testbed: ${line}`);
  await build([], log);
  const bed = await startBed({ log, clusterProfiles: true });
  const rss = bed.rssBytes();
  log(`bed up in ${bed.startSeconds} s, ${Math.round(rss.total / 2 ** 20)} MiB resident`);
  // the direct fleet's own credential for each cluster, as its configuration holds it
  const direct = bed.fleets.direct.config as {
    controlPlane: { clientCertificateData: string; clientKeyData: string };
    members: { clusters: { name: string; clientCertificateData: string; clientKeyData: string }[] };
  };
  const unb64 = (s: string) => Buffer.from(s, 'base64').toString();
  const identity = (ep: { clientCertificateData: string; clientKeyData: string }) => ({
    cert: unb64(ep.clientCertificateData),
    key: unb64(ep.clientKeyData),
  });
  const memberIdentity = (name: string) => identity(direct.members.clusters.find((c) => c.name === name)!);
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
      fleet: memberIdentity(m.name),
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
      fleet: identity(direct.controlPlane),
      logLine: '',
      logsFile: '',
      fleetCert: pair(bed.karmadaApiserver.pki.client(FLEET_USER)),
    },
    etcdUrl: bed.etcd.url,
  };
  project.provide('bed', info);
  return () => bed.stop();
}
