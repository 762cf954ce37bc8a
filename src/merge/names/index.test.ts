import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { conflict, notFound } from '../../kube/status.ts';
import {
  decodeName,
  encodeName,
  isValidClusterName,
  isValidClusterspace,
  rewriteStatusMessage,
  rewriteStatusNames,
} from './index.ts';

const clusterName = fc
  .stringMatching(/^[a-z0-9]([-a-z0-9]{0,46}[a-z0-9])?$/)
  .filter((s) => s !== 'all' && s !== 'karmada');
/** Kubernetes object names: DNS subdomains, path segments, anything without `.clusterspace.` */
const objectName = fc
  .oneof(
    fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,60}[a-z0-9])?$/),
    fc.string({ minLength: 1, maxLength: 40 }),
  )
  .filter((s) => !s.includes('.clusterspace.'));

describe('fleet names', () => {
  it('round-trips any name and valid cluster', () => {
    fc.assert(
      fc.property(objectName, fc.oneof(clusterName, fc.constant('karmada')), (name, cluster) => {
        expect(decodeName(encodeName(name, cluster))).toEqual({ name, cluster });
      }),
      { numRuns: 5000 },
    );
  });

  it('decodes a plain name to no cluster', () => {
    fc.assert(
      fc.property(objectName, (name) => {
        expect(decodeName(name)).toEqual({ name, cluster: undefined });
      }),
      { numRuns: 5000 },
    );
  });

  it('never throws on garbage, and what decodes re-encodes to the input', () => {
    const garbage = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc
        .tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }))
        .map(([a, b]) => `${a}.clusterspace.${b}`),
    );
    const seen = { fleetNames: 0, plain: 0 };
    fc.assert(
      fc.property(garbage, (s) => {
        const d = decodeName(s);
        if (d.cluster === undefined) {
          seen.plain++;
          expect(d.name).toBe(s);
        } else {
          seen.fleetNames++;
          expect(encodeName(d.name, d.cluster)).toBe(s);
          expect(d.name.length).toBeGreaterThan(0);
          expect(isValidClusterspace(d.cluster)).toBe(true);
        }
      }),
      { numRuns: 10000 },
    );
    // both branches ran: a decoder that never finds a cluster would pass the property alone
    expect(seen.fleetNames).toBeGreaterThan(100);
    expect(seen.plain).toBeGreaterThan(100);
  });

  it('splits at the last separator and refuses impossible clusters', () => {
    expect(decodeName('web.clusterspace.member1')).toEqual({ name: 'web', cluster: 'member1' });
    expect(decodeName('a.clusterspace.b.clusterspace.c')).toEqual({ name: 'a.clusterspace.b', cluster: 'c' });
    expect(decodeName('web.clusterspace.karmada')).toEqual({ name: 'web', cluster: 'karmada' });
    for (const plain of [
      'web.clusterspace.all',
      'web.clusterspace.',
      '.clusterspace.m1',
      'web.clusterspace.Member',
      'web.clusterspace.m_1',
      `web.clusterspace.${'a'.repeat(49)}`,
      'web',
    ]) {
      expect(decodeName(plain)).toEqual({ name: plain, cluster: undefined });
    }
  });

  it('validates cluster names like Karmada (DNS-1123 label, ≤ 48) and reserves all/karmada', () => {
    expect(isValidClusterName('member1')).toBe(true);
    expect(isValidClusterName('a'.repeat(48))).toBe(true);
    expect(isValidClusterName('a'.repeat(49))).toBe(false);
    for (const bad of ['', 'all', 'karmada', 'Member', '-a', 'a-', 'a.b', 'a_b', ' a'])
      expect(isValidClusterName(bad)).toBe(false);
    expect(isValidClusterspace('all')).toBe(true);
    expect(isValidClusterspace('karmada')).toBe(true);
  });
});

describe('Status messages', () => {
  it('rewrites only quoted occurrences', () => {
    expect(rewriteStatusMessage('pods "web" not found', 'web', 'web.clusterspace.member1')).toBe(
      'pods "web.clusterspace.member1" not found',
    );
    expect(rewriteStatusMessage('pods "web-1" not found; web is fine; "web"', 'web', 'F')).toBe(
      'pods "web-1" not found; web is fine; "F"',
    );
    fc.assert(
      fc.property(objectName, objectName, fc.string(), fc.string(), (name, other, a, b) => {
        // object names never contain quotes; keep the surrounding text quote-free too
        fc.pre(![name, other, a, b].some((x) => x.includes('"')) && other !== name);
        const msg = `${a}"${name}"${b} "${other}"`;
        const out = rewriteStatusMessage(msg, name, `${name}.clusterspace.m1`);
        expect(out).toBe(`${a}"${name}.clusterspace.m1"${b} "${other}"`);
      }),
      { numRuns: 2000 },
    );
  });
  it('rewrites Status details too', () => {
    const s = rewriteStatusNames(notFound('pods', '', 'web'), 'web', 'web.clusterspace.m1');
    expect(s.message).toBe('pods "web.clusterspace.m1" not found');
    expect(s.details?.name).toBe('web.clusterspace.m1');
    const c = rewriteStatusNames(
      conflict('deployments', 'apps', 'web', 'the object has been modified'),
      'web',
      'web.clusterspace.m1',
    );
    expect(c.message).toBe(
      'Operation cannot be fulfilled on deployments.apps "web.clusterspace.m1": the object has been modified',
    );
  });
});
