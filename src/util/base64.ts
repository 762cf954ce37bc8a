/**
 * base64 in both alphabets. base64url (JWTs, the fleet's resourceVersions and continue tokens) comes from
 * `jose`, which the JWT authenticator bundles anyway; plain base64 (kubeconfig `…Data` fields, Secret
 * data) is atob/btoa, which both runtimes have.
 */
import { base64url } from 'jose';

const utf8 = new TextEncoder();
const URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** base64url without padding. */
export function base64urlEncode(bytes: Uint8Array | string): string {
  return base64url.encode(bytes);
}

/**
 * Strict base64url: the url alphabet only, no padding, no whitespace, zero trailing bits, so that every
 * byte string has exactly one accepted spelling (tokens the fleet issues must not have aliases).
 * undefined for anything else.
 */
export function base64urlDecode(s: string): Uint8Array | undefined {
  const rest = s.length % 4;
  if (rest === 1 || !/^[A-Za-z0-9_-]*$/.test(s)) return undefined;
  // the bits of the last character past the last whole byte must be zero, or two spellings would decode
  // to the same bytes (2 characters carry 1 byte + 4 spare bits, 3 carry 2 bytes + 2)
  if (rest !== 0 && (URL_ALPHABET.indexOf(s[s.length - 1]!) & (rest === 2 ? 0x0f : 0x03)) !== 0)
    return undefined;
  try {
    return base64url.decode(s);
  } catch {
    return undefined;
  }
}

/** Standard base64 with padding, of bytes or of a string's UTF-8. */
export function base64Encode(data: Uint8Array | string): string {
  const bytes = typeof data === 'string' ? utf8.encode(data) : data;
  let bin = '';
  // String.fromCharCode on a whole large array overflows the argument limit: go in chunks
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/**
 * Standard base64 (padding optional, whitespace ignored, as kubeconfig files are often wrapped).
 * Throws a TypeError naming nothing secret when the text is not base64.
 */
export function base64Decode(s: string): Uint8Array {
  let bin: string;
  try {
    bin = atob(s.replace(/\s+/g, ''));
  } catch {
    throw new TypeError('not valid base64');
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
