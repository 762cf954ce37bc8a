/**
 * `npm run dev:worker`: the embedded demo fleet served from workerd by `wrangler dev`.
 *
 * The simulated clusters stand for remote API servers, so they run here in Node on loopback ports (as
 * `npm start` runs them); the fleet itself runs in workerd and reaches them over real HTTP, exactly as a
 * deployed worker reaches real clusters. PORT (default 8787) picks the worker's port.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { startSimFleet } from '../node/demo.ts';

const port = process.env.PORT ?? '8787';
const demo = await startSimFleet({ propagation: true });
mkdirSync('.cache', { recursive: true });
// an env file keeps the JSON intact (a --var argument would be split at its first colon)
const envFile = '.cache/dev-worker.env';
writeFileSync(envFile, `FLEET_CONFIG='${JSON.stringify(demo.karmadaConfig())}'\n`);
console.log(
  `simulated Karmada control plane at ${demo.karmadaUrl}; members ${[...demo.members.keys()].join(', ')}`,
);
console.log(`fleet (workerd) on http://127.0.0.1:${port}:
  kubectl --server http://127.0.0.1:${port}/clusterspaces/member1 get pods -A`);
const child = spawn(
  'npx',
  [
    'wrangler',
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    port,
    '--env-file',
    envFile,
    '--show-interactive-dev-session=false',
  ],
  // its own process group: npx does not pass a signal on to wrangler, so stopping kills the whole group
  { stdio: 'inherit', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' }, detached: true },
);
const stop = async () => {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  await demo.close();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
child.on('exit', (code) => {
  void demo.close().then(() => process.exit(code ?? 0));
});
