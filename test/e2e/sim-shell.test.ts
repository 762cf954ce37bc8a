/**
 * The simulated containers' shell and tar through the fleet (Node and workerd) with real kubectl 1.35, by
 * plain name through `/clusterspaces/member1` and by fleet name at the root: `sh -c` with lists and exit
 * codes, a missing command's 127, an interactive `sh` fed on stdin, and `kubectl cp` to a pod and back.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import type { Kubectl } from '../helpers/kubectl.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };

describe.each(RUNTIMES)('the simulated container shell with kubectl on %s', (runtime) => {
  const f = useSimFleet(runtime);
  let k: Kubectl;
  let root: Kubectl;
  let pod: string;
  let fleetPod: string;
  const dir = mkdtempSync(join(tmpdir(), 'sim-shell-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(() => {
    k = f.kubectl('/clusterspaces/member1');
    root = f.kubectl();
    const p = f.sims.members
      .get('member1')!
      .list(PODS)
      .find((x: any) => x.metadata.namespace === 'shop' && x.status?.phase === 'Running') as KubeObject;
    pod = p.metadata.name!;
    fleetPod = `${pod}.clusterspace.member1`;
  });

  it('seq counts, as in a BusyBox image (kubectl exec at the root)', async () => {
    const r = await root.run([
      '-n',
      'shop',
      'exec',
      fleetPod,
      '--',
      'sh',
      '-c',
      'for i in $(seq 3); do echo "try $i"; done',
    ]);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'try 1\ntry 2\ntry 3\n', '']);
  });

  it('sh -c "sleep 1; exit 3" exits 3; lists, $(…), for and >&2 behave like sh', async () => {
    const t0 = Date.now();
    const r = await k.run(['-n', 'shop', 'exec', pod, '--', 'sh', '-c', 'sleep 1; exit 3']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('command terminated with exit code 3');
    const s = await k.run([
      '-n',
      'shop',
      'exec',
      pod,
      '--',
      'sh',
      '-c',
      'false || echo "on $(hostname)"; for x in a b; do echo $x; done; echo warn >&2 && true',
    ]);
    expect(s).toMatchObject({ code: 0, stdout: `on ${pod}\na\nb\n`, stderr: 'warn\n' });
  });

  it('a missing command inside sh gives 127 and the shell’s message', async () => {
    const r = await root.run(['-n', 'shop', 'exec', fleetPod, '--', 'sh', '-c', 'nosuchcmd']);
    expect(r.code).toBe(127);
    expect(r.stderr).toContain('sh: nosuchcmd: not found');
  });

  it('an interactive sh runs what it reads on stdin', async () => {
    const r = await k.run(['-n', 'shop', 'exec', '-i', pod, '--', 'sh'], {
      stdin: 'echo first\nX=42\necho "x is $X"\nexit 5\n',
    });
    expect(r.stdout).toBe('first\nx is 42\n');
    expect(r.code).toBe(5);
  });

  it('kubectl cp copies a file to the pod and back (root by fleet name, prefix by plain name)', async () => {
    const src = join(dir, 'in.txt');
    const content = `hello from the test\n${'x'.repeat(5000)}\n`;
    writeFileSync(src, content);
    const up = await root.run(['-n', 'shop', 'cp', src, `${fleetPod}:/tmp/copied.txt`]);
    expect(up).toMatchObject({ code: 0 });
    const cat = await k.run(['-n', 'shop', 'exec', pod, '--', 'cat', '/tmp/copied.txt']);
    expect(cat.stdout).toBe(content);
    const back = join(dir, 'back.txt');
    const down = await k.run(['-n', 'shop', 'cp', `${pod}:/tmp/copied.txt`, back]);
    expect(down.code).toBe(0);
    expect(readFileSync(back, 'utf8')).toBe(content);
    const missing = await k.run(['-n', 'shop', 'cp', `${pod}:/tmp/none.txt`, join(dir, 'none')]);
    // the remote tar complains and sends an empty archive: nothing is written locally (kubectl relays the
    // complaint as it arrives, racing its own exit, and does not turn the remote status into its own)
    expect(missing.stderr).not.toContain('panic');
    expect(existsSync(join(dir, 'none'))).toBe(false);
  });
});
