/**
 * `kubectl debug -i` through the fleet at the root (Node and workerd): the simulated kubelet's attach
 * ends when the client's input does, for a container that takes stdin (its main process reads it, as a
 * shell or cat does), so kubectl exits instead of waiting forever.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../sim/index.ts';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

const PODS = { group: '', version: 'v1', resource: 'pods' };

describe.each(RUNTIMES)('kubectl debug -i on %s', (runtime) => {
  const f = useSimFleet(runtime);

  it('ends at the end of its input, with what it read echoed by the container', async () => {
    const pod = f
      .member('member2')
      .list(PODS, 'shop')
      .find((p) => (p as KubeObject & { status?: { phase?: string } }).status?.phase === 'Running')!;
    const r = await f
      .kubectl()
      .run(
        [
          'debug',
          '-i',
          '-n',
          'shop',
          `${pod.metadata.name}.clusterspace.member2`,
          '--image=busybox:1.36',
          `--container=dbg-i-${runtime}`,
          '--',
          'cat',
        ],
        { stdin: 'hello from stdin\n', timeoutMs: 30_000 },
      );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('hello from stdin');
  });
});
