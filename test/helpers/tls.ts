/**
 * A throwaway PKI for tests: a CA, a serving certificate for 127.0.0.1 / localhost, and client certificates
 * (CN = user, O = groups, clientAuth), in a temporary directory. A thin wrapper over the project's one
 * PKI (testbed/pki.ts, the openssl CLI), which the real test bed uses as well.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { b64, type ClientOptions, createCA, type KeyPair } from '../../testbed/pki.ts';

export type { KeyPair };

export interface TestCA extends KeyPair {
  /** the CA certificate, base64 (for …Data config fields and kubeconfig) */
  certData: string;
  /** a serving certificate for 127.0.0.1 and localhost */
  server(): KeyPair;
  /** a client certificate: CN = user, one O per group */
  client(user: string, groups?: string[], opts?: ClientOptions): KeyPair;
}

export function createTestCA(name = 'fleet-test-ca'): TestCA {
  const ca = createCA(mkdtempSync(join(tmpdir(), 'fleet-pki-')), name);
  const pair = ({ cert, key }: KeyPair): KeyPair => ({ cert, key });
  return {
    cert: ca.cert,
    key: ca.key,
    certData: ca.certData,
    server: () => pair(ca.serving()),
    client: (user, groups = [], opts = {}) =>
      pair(ca.client(user, groups, { ...opts, days: opts.days ?? 1 })),
  };
}

export { b64 };
