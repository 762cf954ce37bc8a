/**
 * Kustomize's configMapGenerator appends a content hash to the name it is given. Given a fleet name
 * (`kgen.clusterspace.member3`), the hash lands after the cluster (`kgen.clusterspace.member3-<hash>`),
 * which names a cluster that does not exist: the fleet refuses it, and the refusal says what to do
 * instead (a namespace by fleet name, or a per-cluster context). Real kubectl 1.35 `apply -k`, on Node
 * and in workerd; then the advice followed, which works.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RUNTIMES } from '../helpers/fleet.ts';
import { useSimFleet } from '../helpers/simfleet.ts';

function kustomization(name: string, namespace?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-kgen-'));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `${namespace ? `namespace: ${namespace}\n` : ''}configMapGenerator:
- name: ${name}
  literals:
  - color=blue
`,
  );
  return dir;
}

describe.each(RUNTIMES)('kustomize configMapGenerator on %s', (runtime) => {
  const f = useSimFleet(runtime);
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a fleet name with the hash after it is refused with what to do instead', async () => {
    const dir = kustomization('kgen.clusterspace.member3');
    dirs.push(dir);
    const r = await f.kubectl().run(['apply', '-k', dir, '-n', 'default']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('kgen.clusterspace.member3-');
    expect(r.stderr).toMatch(/-n default\.clusterspace\.member3/);
    expect(r.stderr).toMatch(/clusterspaces\/member3/);
  });

  it('the advice works: the plain name in a namespace by fleet name', async () => {
    const dir = kustomization('kgen', 'default.clusterspace.member3');
    dirs.push(dir);
    const r = await f.kubectl().run(['apply', '-k', dir]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/configmap\/kgen-[a-z0-9]+.* created/);
  });
});
