/**
 * Names that stay valid (names.ts): fleet names are never longer than 253 characters; longer ones are
 * shortened to `<head>-<digest>.clusterspace-h.<cluster>`, a valid DNS-1123 subdomain, which decodes back
 * once known (names-memo.ts); names that fit keep their form exactly.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { objectForCluster } from '../writes.ts';
import { NAME_DIGEST_LENGTH, nameDigest } from './hash.ts';
import {
  decodeName,
  encodeName,
  FLEET_NAME_MAX_LENGTH,
  isShortenedName,
  SHORTENED_SEPARATOR,
  shortenedName,
} from './index.ts';
import { forgetShortened, isAmbiguous, MAX_ENTRIES, recallShortened, rememberShortened } from './memo.ts';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const cluster = fc
  .stringMatching(/^[a-z0-9]([-a-z0-9]{0,46}[a-z0-9])?$/)
  .filter((s) => s !== 'all' && s !== 'karmada');
const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
/** DNS-1123 subdomains up to 253 characters, long ones often (the names this is about) */
const subdomain = fc
  .array(label, { minLength: 1, maxLength: 8 })
  .map((ls) => ls.join('.'))
  .chain((s) => fc.integer({ min: 1, max: 253 }).map((n) => s.repeat(Math.ceil(n / s.length)).slice(0, n)))
  .map((s) => s.replace(/[-.]+$/, '').replace(/\.(?=[-.])|-(?=\.)/g, 'a'))
  .filter((s) => s.length > 0 && SUBDOMAIN.test(s) && !s.includes('clusterspace'));
/** names of kinds kube checks as path segments only (RBAC): anything but `/`, `%`, `.` and `..` */
const pathSegment = fc
  .string({ minLength: 1, maxLength: 400, unit: 'grapheme-ascii' })
  .filter((s) => !/[/%]/.test(s) && s !== '.' && s !== '..' && !s.includes('.clusterspace'));

beforeEach(() => forgetShortened());

describe('the digest', () => {
  it('is the first 64 bits of SHA-256 of the UTF-8 name (checked against node:crypto)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300, unit: 'binary' }), (name) => {
        const want = BigInt(`0x${createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 16)}`);
        expect(nameDigest(name)).toBe(want.toString(36).padStart(NAME_DIGEST_LENGTH, '0'));
      }),
      { numRuns: 2000 },
    );
  });

  it('is 13 base-36 characters of the first 64 bits', () => {
    const want = BigInt(`0x${createHash('sha256').update('abc').digest('hex').slice(0, 16)}`);
    expect(nameDigest('abc')).toBe(want.toString(36).padStart(NAME_DIGEST_LENGTH, '0'));
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(nameDigest(s)).toMatch(/^[0-9a-z]{13}$/);
      }),
    );
  });
});

describe('names that stay valid', () => {
  it('a name that fits keeps today’s form exactly', () => {
    fc.assert(
      fc.property(subdomain, cluster, (name, c) => {
        const full = `${name}.clusterspace.${c}`;
        fc.pre(full.length <= FLEET_NAME_MAX_LENGTH);
        expect(encodeName(name, c)).toBe(full);
      }),
      { numRuns: 3000 },
    );
    // the bound exactly: 253 fits, 254 does not
    const c = 'm'.repeat(48);
    expect(encodeName('a'.repeat(191), c)).toBe(`${'a'.repeat(191)}.clusterspace.${c}`);
    expect(isShortenedName(encodeName('a'.repeat(192), c))).toBe(true);
  });

  it('label-only kinds (≤63) are never shortened, whatever the cluster', () => {
    fc.assert(
      fc.property(label, cluster, (name, c) => {
        const out = encodeName(name, c);
        expect(out).toBe(`${name}.clusterspace.${c}`);
        // a DNS-1123 subdomain of at most 125 characters: valid wherever kube takes a subdomain
        expect(out.length).toBeLessThanOrEqual(63 + 14 + 48);
        expect(out).toMatch(SUBDOMAIN);
      }),
    );
  });

  it('any subdomain name: at most 253, a valid DNS-1123 subdomain, and it decodes back', () => {
    let shortened = 0;
    fc.assert(
      fc.property(subdomain, cluster, (name, c) => {
        const out = encodeName(name, c);
        expect(out.length).toBeLessThanOrEqual(FLEET_NAME_MAX_LENGTH);
        expect(out).toMatch(SUBDOMAIN);
        expect(decodeName(out)).toEqual({ name, cluster: c });
        if (isShortenedName(out)) {
          shortened++;
          expect(out.endsWith(`${SHORTENED_SEPARATOR}${c}`)).toBe(true);
          // the head is the name's own start, as long as fits
          const stem = out.slice(0, -(SHORTENED_SEPARATOR.length + c.length));
          const head = stem.slice(0, -(NAME_DIGEST_LENGTH + 1));
          expect(name.startsWith(head)).toBe(true);
          // a stranger (another replica, or this one after forgetting) knows the cluster but not the name
          forgetShortened();
          expect(decodeName(out)).toEqual({ name: out, cluster: c, unresolved: true });
        }
      }),
      { numRuns: 3000 },
    );
    expect(shortened).toBeGreaterThan(300);
  });

  it('any path-segment name (RBAC kinds): at most 253 and it decodes back', () => {
    fc.assert(
      fc.property(pathSegment, cluster, (name, c) => {
        const out = encodeName(name, c);
        expect(out.length).toBeLessThanOrEqual(FLEET_NAME_MAX_LENGTH);
        expect(decodeName(out)).toEqual({ name, cluster: c });
        // still a path segment, as kube checks these kinds' names
        expect(out).not.toMatch(/[/%]/);
        if (isShortenedName(out)) expect(out).toMatch(SUBDOMAIN);
      }),
      { numRuns: 3000 },
    );
  });

  it('the cluster is always readable and the suffix is a label', () => {
    fc.assert(
      fc.property(subdomain, cluster, (name, c) => {
        const out = encodeName(name, c);
        const suffix = out.slice(out.lastIndexOf('.') + 1);
        expect(suffix).toBe(c);
        expect(suffix).toMatch(LABEL);
      }),
    );
  });

  it('names that share their head still get different shortened names', () => {
    const head = 'x'.repeat(240);
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(encodeName(`${head}-${i}`, 'member1'));
    expect(seen.size).toBe(2000);
  });

  it('a 253-character name beside a 48-character cluster', () => {
    const name = `cfg-${'a'.repeat(249)}`;
    const c = `m${'1'.repeat(47)}`;
    const out = encodeName(name, c);
    expect(out.length).toBe(253);
    expect(out).toBe(`cfg-${'a'.repeat(171)}-${nameDigest(name)}.clusterspace-h.${c}`);
    expect(decodeName(out)).toEqual({ name, cluster: c });
  });

  it('a name with no valid start has a digest alone', () => {
    const name = `:${'A'.repeat(300)}`;
    const out = shortenedName(name, 'member1');
    expect(out).toBe(`${nameDigest(name)}.clusterspace-h.member1`);
    expect(isShortenedName(out)).toBe(true);
  });

  it('what only looks shortened stays a plain name; a long plain form still decodes', () => {
    for (const s of [
      `x.clusterspace-h.member1`, // no digest
      `x-${'A'.repeat(13)}.clusterspace-h.member1`, // not base 36 lowercase
      `x-${'a'.repeat(13)}.clusterspace-h.Bad_`, // not a cluster name
      `x-${'a'.repeat(13)}.clusterspace-h.all`,
      `${'a'.repeat(250)}-${'a'.repeat(13)}.clusterspace-h.m`, // too long to be one
    ])
      expect(decodeName(s)).toEqual({ name: s, cluster: undefined });
    const long = `${'b'.repeat(300)}.clusterspace.member1`;
    expect(decodeName(long)).toEqual({ name: 'b'.repeat(300), cluster: 'member1' });
    // shortened names of the control plane
    const k = encodeName('k'.repeat(250), 'karmada');
    expect(decodeName(k)).toEqual({ name: 'k'.repeat(250), cluster: 'karmada' });
  });
});

describe('the memo', () => {
  it('is bounded, least recently used first out', () => {
    rememberShortened('first', 'a');
    for (let i = 0; i < MAX_ENTRIES - 1; i++) rememberShortened(`s${i}`, `n${i}`);
    expect(recallShortened('first')).toBe('a'); // used: kept
    rememberShortened('one-more', 'b');
    expect(recallShortened('s0')).toBeUndefined();
    expect(recallShortened('first')).toBe('a');
  });

  it('two names for one shortened name make it ambiguous, not wrong', () => {
    rememberShortened('s', 'a');
    rememberShortened('s', 'a');
    expect(recallShortened('s')).toBe('a');
    rememberShortened('s', 'b');
    expect(isAmbiguous('s')).toBe(true);
    expect(recallShortened('s')).toBeUndefined();
  });
});

describe('shortened names in what clients write', () => {
  it('the URL’s own shortened name maps to the object’s name; an unknown one is refused, never stored', () => {
    const long = `cfg-${'a'.repeat(240)}`;
    const short = encodeName(long, 'member1');
    const ctx = { cluster: 'member1', membership: ['member1'], url: { fleet: short, plain: long } };
    const ok = objectForCluster({ metadata: { name: short, labels: { a: 'b' } } }, ctx);
    expect(ok).toEqual({ ok: true, value: { metadata: { name: long, labels: { a: 'b' } } } });
    const owner = encodeName(`rs-${'r'.repeat(240)}`, 'member1');
    forgetShortened();
    const refused = objectForCluster(
      { metadata: { name: 'x', ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: owner, uid: 'u' }] } },
      { cluster: 'member1', membership: ['member1'] },
    );
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.status.code).toBe(400);
      expect(refused.status.message).toContain(`"${owner}" is a shortened fleet name`);
    }
  });
});
