/**
 * kubectl's generators by fleet name at the root: `kubectl run`, `create job` and `create cronjob` name the
 * container after the object, and a container name must be a DNS-1123 label (the simulated members
 * validate it as kube-apiserver does: sim/podspec.ts). The fleet writes that container with the plain
 * name the object gets, so the member holds `solo` with a container `solo`. `create deployment` names
 * its container after the image: unchanged. kubectl 1.35 (protobuf bodies), on Node and in workerd.
 */
import { describe, expect, it } from 'vitest';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const NS = 'default';
const PODS = { group: '', version: 'v1', resource: 'pods' };
const JOBS = { group: 'batch', version: 'v1', resource: 'jobs' };
const CRONJOBS = { group: 'batch', version: 'v1', resource: 'cronjobs' };
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };

describe.each(RUNTIMES)('kubectl generators by fleet name on %s', (runtime) => {
  const f = useSimFleet(runtime);
  const containerNames = (spec: any): string[] => spec.containers.map((c: { name: string }) => c.name);

  it('run, create job, create cronjob and create deployment create them in the named member', async () => {
    const k = f.kubectl();
    const at = (n: string) => `${n}.clusterspace.member2`;
    const ok = async (args: string[]) => {
      const r = await k.run(args);
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.code).toBe(0);
      return r.stdout;
    };
    expect(await ok(['run', at('solo'), '--image=nginx:1.27', '-n', NS])).toBe(`pod/${at('solo')} created\n`);
    expect(await ok(['create', 'job', at('once'), '--image=busybox', '-n', NS, '--', 'true'])).toBe(
      `job.batch/${at('once')} created\n`,
    );
    await ok(['create', 'cronjob', at('tick'), '--image=busybox', '--schedule=*/5 * * * *', '-n', NS]);
    await ok(['create', 'deployment', at('web'), '--image=nginx:1.27', '-n', NS]);

    const m = f.member('member2');
    const pod = m.get(PODS, NS, 'solo') as any;
    expect(containerNames(pod.spec)).toEqual(['solo']);
    expect(containerNames((m.get(JOBS, NS, 'once') as any).spec.template.spec)).toEqual(['once']);
    const cron = m.get(CRONJOBS, NS, 'tick') as any;
    expect(containerNames(cron.spec.jobTemplate.spec.template.spec)).toEqual(['tick']);
    expect(containerNames((m.get(DEPLOYMENTS, NS, 'web') as any).spec.template.spec)).toEqual(['nginx']);
    // nothing else of the body changed: kubectl run's label keeps the name as kubectl wrote it
    expect(pod.metadata.labels).toEqual({ run: at('solo') });
    // read back at the root by fleet name; the container under the name the member gave it
    expect(await ok(['get', 'pod', at('solo'), '-n', NS, '-o', 'jsonpath={.spec.containers[*].name}'])).toBe(
      'solo',
    );
  });

  it("a container named otherwise with dots is still the member's 422", async () => {
    const k = f.kubectl();
    const pod = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'dotted.clusterspace.member2', namespace: NS },
      spec: { containers: [{ name: 'other.clusterspace.member2', image: 'nginx' }] },
    });
    const r = await k.run(['create', '-f', '-'], { stdin: pod });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'spec.containers[0].name: Invalid value: "other.clusterspace.member2": must not contain dots',
    );
    expect(f.member('member2').get(PODS, NS, 'dotted')).toBeUndefined();
  });
});
