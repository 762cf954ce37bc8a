import { describe, expect, it } from 'vitest';
import { failure, genericServerResponse, readStatus, statusOfAnswer } from './status.ts';

describe('genericServerResponse', () => {
  it('keeps a 4xx as that 4xx, with the reason its code means', () => {
    const s = genericServerResponse(431, 'Request Header Fields Too Large');
    expect(s).toMatchObject({ kind: 'Status', status: 'Failure', code: 431, reason: 'Unknown' });
    expect(s.message).toBe(
      'the server responded with the status code 431 but did not return more information',
    );
    expect(s.details?.causes).toEqual([
      { reason: 'UnexpectedServerResponse', message: 'Request Header Fields Too Large' },
    ]);
    expect(genericServerResponse(404, '404 page not found')).toMatchObject({ code: 404, reason: 'NotFound' });
    expect(genericServerResponse(429, '')).toMatchObject({ code: 429, reason: 'TooManyRequests' });
    expect(genericServerResponse(409, '', 'POST').reason).toBe('AlreadyExists');
    expect(genericServerResponse(409, '', 'PUT').reason).toBe('Conflict');
  });

  it('keeps a 403 text as the message (it says who tried what), and wraps a 5xx text', () => {
    expect(genericServerResponse(403, 'user x cannot list pods').message).toBe('user x cannot list pods');
    expect(genericServerResponse(502, 'Bad Gateway')).toMatchObject({
      code: 502,
      reason: 'InternalError',
      message: 'an error on the server ("Bad Gateway") has prevented the request from succeeding',
    });
  });

  it('quotes at most 256 characters of what the server sent', () => {
    const s = genericServerResponse(400, `<html>${'x'.repeat(10_000)}</html>`);
    expect(s.details?.causes?.[0]?.message?.length).toBe(256);
  });
});

describe('statusOfAnswer', () => {
  it('uses the body when it is a Status, the code otherwise', () => {
    const own = failure(403, 'Forbidden', 'pods is forbidden');
    expect(statusOfAnswer(403, JSON.stringify(own))).toEqual(own);
    expect(statusOfAnswer(431, 'Request Header Fields Too Large')).toMatchObject({ code: 431 });
    expect(statusOfAnswer(400, '{"kind":"Pod"}')).toMatchObject({ code: 400, reason: 'BadRequest' });
    // a "Status" claiming success on an error answer is not believed
    expect(statusOfAnswer(400, '{"kind":"Status","code":200}')).toMatchObject({ code: 400 });
  });
});

describe('readStatus', () => {
  it('reads a Status body; a 4xx without one is the generic Status for its code; a bare 5xx is none', async () => {
    const own = failure(403, 'Forbidden', 'pods is forbidden');
    expect(await readStatus(new Response(JSON.stringify(own), { status: 403 }))).toEqual(own);
    expect(await readStatus(new Response(null, { status: 431 }))).toMatchObject({
      kind: 'Status',
      code: 431,
      reason: 'Unknown',
    });
    expect(await readStatus(new Response('404 page not found', { status: 404 }))).toMatchObject({
      code: 404,
      reason: 'NotFound',
    });
    expect(await readStatus(new Response('<html>bad gateway</html>', { status: 502 }))).toBeUndefined();
  });
});
