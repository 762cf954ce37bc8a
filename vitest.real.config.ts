import { defineConfig } from 'vitest/config';

// `npm run test:real`: the suites against the real test bed (real kube-apiservers, kwok, and the fleets in
// front; testbed/). Its global setup builds the binaries (Go 1.26.x needed) and starts the bed once for
// every suite; each suite works in namespaces of its own.
export default defineConfig({
  test: {
    include: ['test/real/**/*.test.ts'],
    globalSetup: ['test/real/global-setup.ts'],
    // a cold build of the Kubernetes binaries takes minutes (testbed/README.md)
    hookTimeout: 1_800_000,
    testTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
