/**
 * The Node entry reads a header's lines (Impersonate-Group, one group a line) from the raw request lines
 * (deploy/node/tls.ts), not from IncomingMessage#headersDistinct: both must say the same, for any mix of
 * cases and repeats, on a request Node really parsed.
 */

import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headerLines } from '../../deploy/node/tls.ts';

describe('headerLines', () => {
  let port = 0;
  let last: ((req: IncomingMessage) => void) | undefined;
  const server = createServer((req, res) => {
    last?.(req);
    res.end();
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** sends `lines` raw and returns what Node parsed */
  const parsed = (lines: Array<[string, string]>) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      last = resolve;
      const s = connect(port, '127.0.0.1');
      s.on('error', reject);
      s.on('data', () => s.end());
      s.write(`GET / HTTP/1.1\r\nHost: x\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
    });

  it('says what headersDistinct says', async () => {
    const name = fc.constantFrom(
      'Impersonate-Group',
      'impersonate-group',
      'IMPERSONATE-GROUP',
      'Impersonate-User',
      'X-Other',
    );
    const value = fc.stringMatching(/^[a-z0-9:,-]{1,12}$/);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(name, value), { maxLength: 8 }), async (lines) => {
        const req = await parsed(lines);
        for (const n of ['impersonate-group', 'impersonate-user', 'x-other', 'absent'])
          expect(headerLines(req.rawHeaders, n)).toEqual(req.headersDistinct[n]);
      }),
      { numRuns: 60 },
    );
  });
});
