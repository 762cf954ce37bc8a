import { describe, expect, it } from 'vitest';
import { documentCacheHeaders } from './http.ts';

const h = (o: Parameters<typeof documentCacheHeaders>[0]) => Object.fromEntries(documentCacheHeaders(o));

describe('documentCacheHeaders', () => {
  it('a partial document is kept by nobody', () => {
    expect(h({ partial: true, varyAccept: true, sharedIdentity: true, maxAgeSeconds: 30 })).toEqual({
      'Cache-Control': 'no-cache, private',
      Vary: 'Accept',
    });
  });

  it('a caller-dependent document may be kept only to revalidate, varying on what carries identity', () => {
    expect(h({ partial: false, varyAccept: true, sharedIdentity: false })).toEqual({
      'Cache-Control': 'public, no-cache',
      Vary: 'Accept, Authorization, Impersonate-User, Impersonate-Group, Impersonate-Uid',
    });
    expect(h({ partial: false, varyAccept: false, sharedIdentity: false, maxAgeSeconds: 30 }).Vary).toBe(
      'Authorization, Impersonate-User, Impersonate-Group, Impersonate-Uid',
    );
  });

  it('a document asked as the public identity may be served by a shared cache for the TTL', () => {
    expect(h({ partial: false, varyAccept: true, sharedIdentity: true, maxAgeSeconds: 30 })).toEqual({
      'Cache-Control': 'public, max-age=30',
      Vary: 'Accept',
    });
    expect(h({ partial: false, varyAccept: false, sharedIdentity: true, maxAgeSeconds: 0 })).toEqual({
      'Cache-Control': 'public, no-cache',
    });
  });
});
