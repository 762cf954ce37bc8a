// What the end-to-end tests drive besides npm packages, from Debian's packages: Kubernetes' official Python
// client (for Debian's own /usr/bin/python3), Chromium (the status page's browser test) and the openssl
// CLI (throwaway certificates for the TLS tests). `npm test` checks them first and, as root on a Debian
// machine, installs what is missing with apt-get; otherwise it stops at once with the command to run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const NEEDS = [
  {
    pkg: 'python3-kubernetes',
    what: "Kubernetes' Python client",
    present: () =>
      spawnSync('/usr/bin/python3', ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0,
  },
  {
    pkg: 'chromium',
    what: 'Chromium',
    present: () => existsSync(process.env.FLEET_CHROMIUM ?? '/usr/bin/chromium'),
  },
  {
    pkg: 'openssl',
    what: 'the openssl CLI',
    present: () => spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0,
  },
];

export function ensureSystemDeps() {
  const missing = NEEDS.filter((n) => !n.present());
  if (!missing.length) return true;
  const pkgs = missing.map((m) => m.pkg);
  const cmd = `apt-get update && apt-get install -y ${pkgs.join(' ')}`;
  const root = process.getuid?.() === 0;
  if (!root || !existsSync('/usr/bin/apt-get')) {
    console.error(`npm test needs ${missing.map((m) => m.what).join(', ')}: run\n  sudo ${cmd}`);
    return false;
  }
  console.log(
    `== installing ${pkgs.join(', ')} from Debian's packages (${missing.map((m) => m.what).join(', ')})`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...pkgs],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (r.status !== 0) {
      console.error(`apt-get ${args.join(' ')} failed (exit ${r.status}); run\n  ${cmd}`);
      return false;
    }
  }
  const still = NEEDS.filter((n) => !n.present());
  if (still.length) console.error(`still missing after apt-get: ${still.map((m) => m.pkg).join(', ')}`);
  return still.length === 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(ensureSystemDeps() ? 0 : 1);
