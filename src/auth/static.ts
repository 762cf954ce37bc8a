/**
 * Static bearer tokens, in kube-apiserver's `--token-auth-file` format: one CSV line per token,
 * `token,user,uid,"group1,group2"` (groups optional; lines starting with # and empty lines ignored).
 *
 * Lookups are timing-safe: the presented token is hashed (SHA-256, Web Crypto) and compared with every
 * known token's hash in constant time, without stopping at the first match, so the time taken says
 * nothing about how much of a token was right.
 */
import { type Identity, withAuthenticatedGroup } from './identity.ts';

export interface StaticToken {
  token: string;
  user: string;
  uid: string;
  groups: string[];
}

/** One CSV record (RFC 4180 quoting: "…", "" for a quote inside). */
function csvFields(line: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) return undefined;
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ',') return undefined;
    } else {
      const end = line.indexOf(',', i);
      field = end < 0 ? line.slice(i) : line.slice(i, end);
      i = end < 0 ? line.length : end;
    }
    out.push(field);
    if (i >= line.length) return out;
    i++; // the comma
  }
}

export function parseTokenCsv(text: string, where = 'staticTokens'): StaticToken[] {
  const out: StaticToken[] = [];
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((raw, n) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const f = csvFields(line);
    if (!f || f.length < 3)
      throw new Error(`${where} line ${n + 1}: expected token,user,uid[,"group1,group2"]`);
    const [token = '', user = '', uid = '', groups = ''] = f;
    if (token === '' || user === '')
      throw new Error(`${where} line ${n + 1}: token and user must not be empty`);
    if (seen.has(token)) throw new Error(`${where} line ${n + 1}: duplicate token`);
    seen.add(token);
    out.push({
      token,
      user,
      uid,
      groups: groups
        .split(',')
        .map((g) => g.trim())
        .filter((g) => g !== ''),
    });
  });
  return out;
}

/** SHA-256 of the UTF-8 of `s` (WebCrypto, on both runtimes). */
export async function sha256(s: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s)));
}

export class StaticTokenAuthenticator {
  /** hashes of the known tokens; computed on first use (each request computes if still missing) */
  private digests?: Uint8Array[];

  constructor(private readonly tokens: StaticToken[]) {}

  get size(): number {
    return this.tokens.length;
  }

  async authenticate(token: string): Promise<Identity | undefined> {
    if (this.tokens.length === 0) return undefined;
    this.digests ??= await Promise.all(this.tokens.map((t) => sha256(t.token)));
    const presented = await sha256(token);
    let match = -1;
    this.digests.forEach((d, i) => {
      let diff = 0;
      for (let b = 0; b < 32; b++) diff |= d[b]! ^ presented[b]!;
      // branch-free select: keeps scanning every entry whatever matched
      const hit = ((diff - 1) >> 31) & 1;
      match = hit ? i : match;
    });
    if (match < 0) return undefined;
    const t = this.tokens[match]!;
    const identity: Identity = { user: t.user, groups: [...t.groups] };
    if (t.uid) identity.uid = t.uid;
    return withAuthenticatedGroup(identity);
  }
}
