/**
 * The two things a newcomer does first: start the fleet (embedded demo, or a config file) and point
 * kubectl at it. Runs the real entry point as a child process, exactly as `npm start` does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Kubectl } from '../helpers/kubectl.ts';

function startMain(args: string[], env: Record<string, string> = {}) {
  const p = spawn(process.execPath, ['--import', 'tsx', 'deploy/node/main.ts', ...args], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  p.stdout.on('data', (d) => {
    out += d;
  });
  p.stderr.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
  return { p, output: () => out, exited };
}

describe('npm start', () => {
  const procs: ChildProcess[] = [];
  afterAll(() => {
    for (const p of procs) p.kill('SIGKILL');
  });

  it('stops with exit code 2 and names the bad field of an invalid config', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-cfg-'));
    const file = join(dir, 'fleet.yaml');
    writeFileSync(
      file,
      'controlPlane:\n  server: https://karmada.example:5443\nmembers:\n  mode: static\n  clusters:\n  - name: all\n    server: https://m1.example\n',
    );
    const m = startMain(['--config', file]);
    procs.push(m.p);
    expect(await m.exited).toBe(2);
    expect(m.output()).toContain('invalid configuration');
    expect(m.output()).toContain(`${file}: members.clusters[0].name: "all" and "karmada" are reserved`);
  });

  /** the URL the fleet printed it listens on */
  function listening(m: ReturnType<typeof startMain>): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no listening line:\n${m.output()}`)), 30_000);
      const check = setInterval(() => {
        const found = /listening on (http:\/\/\S+)/.exec(m.output());
        if (found) {
          clearInterval(check);
          clearTimeout(t);
          resolve(found[1]!);
        }
      }, 50);
    });
  }

  it('serves the embedded demo fleet to kubectl through /clusterspaces/<member>, and drains on SIGTERM', async () => {
    const m = startMain([]);
    procs.push(m.p);
    const url = await listening(m);
    expect(m.output()).toContain(`kubectl --server ${url}/clusterspaces/member1 get pods -A`);
    const k = new Kubectl(`${url}/clusterspaces/member1`);
    const r = await k.run(['get', 'pods', '-A']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/);
    expect(r.stdout).toContain('Running');
    m.p.kill('SIGTERM');
    expect(await m.exited).toBe(0);
  });

  it('--federation off serves the demo without the control plane in the fleet view; a config file refuses it', async () => {
    const m = startMain(['--federation', 'off']);
    procs.push(m.p);
    const url = await listening(m);
    const r = await new Kubectl(url).run(['get', 'deploy', '-n', 'shop', '-o', 'name']);
    expect(r.code).toBe(0);
    // the control plane's templates (web, api) leave the root; the members' copies stay, by fleet name
    expect(r.stdout.trim().split('\n')).toEqual(
      expect.arrayContaining([
        'deployment.apps/web.clusterspace.member1',
        'deployment.apps/api.clusterspace.member3',
      ]),
    );
    expect(r.stdout).not.toMatch(/^deployment\.apps\/(web|api)$/m);
    const cp = await new Kubectl(`${url}/clusterspaces/karmada`).run([
      'get',
      'deploy',
      'web',
      '-n',
      'shop',
      '-o',
      'name',
    ]);
    expect(cp.stdout.trim()).toBe('deployment.apps/web');
    m.p.kill('SIGTERM');
    expect(await m.exited).toBe(0);

    const bad = startMain(['--federation', 'maybe']);
    procs.push(bad.p);
    expect(await bad.exited).toBe(2);
    expect(bad.output()).toContain('--federation: "maybe" is neither "on" nor "off"');
    const dir = mkdtempSync(join(tmpdir(), 'fleet-cfg-'));
    writeFileSync(join(dir, 'f.yaml'), 'controlPlane: {server: https://k.example}\n');
    const withConfig = startMain(['--config', join(dir, 'f.yaml'), '--federation', 'off']);
    procs.push(withConfig.p);
    expect(await withConfig.exited).toBe(2);
    expect(withConfig.output()).toContain('--federation: for the demo only');
  });
});
