/**
 * `tar` in the simulated containers, enough for `kubectl cp`: kubectl runs `tar cf - <path>` to copy from a
 * pod and `tar -xmf - [-C dir]` (or `tar --no-same-permissions --no-same-owner -xmf -`) to copy to one,
 * after `test -d <dest>`. Archives are POSIX ustar (what Go's archive/tar reads and writes), with PAX `x`
 * and GNU `L` long names understood on extraction. Messages as GNU tar prints them.
 */

import { type MemFs, normalize, parentOf } from './memfs.ts';

interface TarIO {
  stdout(d: Uint8Array): void;
  stderr(d: Uint8Array): void;
}
interface TarCtx {
  fs: MemFs;
  cwd: string;
  now(): Date;
  readAll(): Promise<Uint8Array>;
}

const te = new TextEncoder();
const td = new TextDecoder();
const BLOCK = 512;

interface Opts {
  mode?: 'c' | 'x' | 't';
  file?: string;
  dir?: string;
  keepMtime: boolean;
  verbose: boolean;
  paths: string[];
}

function parseArgs(args: string[]): Opts | string {
  const o: Opts = { keepMtime: true, verbose: false, paths: [] };
  const rest = [...args];
  // the first argument may be a bundle of letters without a dash: `tar cf - x`
  if (rest[0] && !rest[0].startsWith('-')) rest[0] = `-${rest[0]}`;
  while (rest.length) {
    const a = rest.shift()!;
    if (a === '--no-same-permissions' || a === '--no-same-owner' || a === '--preserve-permissions') continue;
    if (a.startsWith('--directory=')) {
      o.dir = a.slice(12);
      continue;
    }
    if (a === '--directory') {
      o.dir = rest.shift();
      continue;
    }
    if (a.startsWith('--')) return `unrecognized option '${a}'`;
    if (a.startsWith('-') && a.length > 1) {
      for (let i = 1; i < a.length; i++) {
        const c = a[i]!;
        if (c === 'c' || c === 'x' || c === 't') o.mode = c;
        else if (c === 'm') o.keepMtime = false;
        else if (c === 'v') o.verbose = true;
        else if (c === 'p' || c === 'o') continue;
        else if (c === 'f' || c === 'C') {
          const v = i < a.length - 1 ? a.slice(i + 1) : rest.shift();
          if (v === undefined) return `option requires an argument -- '${c}'`;
          if (c === 'f') o.file = v;
          else o.dir = v;
          break;
        } else return `invalid option -- '${c}'`;
      }
      continue;
    }
    o.paths.push(a);
  }
  return o;
}

export async function tarCommand(args: string[], io: TarIO, ctx: TarCtx): Promise<number> {
  const o = parseArgs(args);
  const err = (s: string) => io.stderr(te.encode(`tar: ${s}\n`));
  if (typeof o === 'string') {
    err(o);
    err("Try 'tar --help' or 'tar --usage' for more information.");
    return 2;
  }
  if (!o.mode) {
    err("You must specify one of the '-Acdtrux', '--delete' or '--test-label' options");
    return 2;
  }
  if (o.file !== undefined && o.file !== '-') {
    err(`${o.file}: Cannot open: archives can only be read from or written to a pipe here`);
    return 2;
  }
  const base = normalize(
    o.dir === undefined ? ctx.cwd : o.dir.startsWith('/') ? o.dir : `${ctx.cwd}/${o.dir}`,
  );
  if (o.mode === 'c') return create(o, io, ctx, base, err);
  if (o.dir !== undefined && !ctx.fs.isDir(base)) {
    err(`${o.dir}: Cannot open: No such file or directory`);
    err('Error is not recoverable: exiting now');
    return 2;
  }
  const data = await ctx.readAll();
  return o.mode === 'x' ? extract(data, o, io, ctx, base, err) : list(data, io, err);
}

// ---------------------------------------------------------------------------------------------- create

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function header(name: string, kind: '0' | '5' | 'x', size: number, mode: number, mtime: Date): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (s: string, at: number, len: number) => h.set(te.encode(s).subarray(0, len), at);
  let prefix = '';
  let short = name;
  if (te.encode(name).length > 100) {
    // ustar splits long names at a slash: prefix (155) / name (100)
    const cut = name.lastIndexOf('/', name.length - 1 - 0);
    if (
      cut > 0 &&
      te.encode(name.slice(0, cut)).length <= 155 &&
      te.encode(name.slice(cut + 1)).length <= 100
    ) {
      prefix = name.slice(0, cut);
      short = name.slice(cut + 1);
    }
  }
  put(short, 0, 100);
  put(octal(mode & 0o7777, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(Math.floor(mtime.getTime() / 1000), 12), 136, 12);
  put('        ', 148, 8);
  put(kind, 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  put('root', 265, 32);
  put('root', 297, 32);
  put(prefix, 345, 155);
  const sum = h.reduce((a, b) => a + b, 0);
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return h;
}

function pad(n: number): Uint8Array {
  return new Uint8Array((BLOCK - (n % BLOCK)) % BLOCK);
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = body.length + 1;
  while (String(len).length + te.encode(body).length !== len)
    len = String(len).length + te.encode(body).length;
  return `${len}${body}`;
}

function create(o: Opts, io: TarIO, ctx: TarCtx, base: string, err: (s: string) => void): number {
  if (o.paths.length === 0) {
    err('Cowardly refusing to create an empty archive');
    return 2;
  }
  let failed = false;
  let warned = false;
  for (const p of o.paths) {
    const full = normalize(p.startsWith('/') ? p : `${base}/${p}`);
    if (!ctx.fs.exists(full)) {
      err(`${p}: Cannot stat: No such file or directory`);
      failed = true;
      continue;
    }
    if (p.startsWith('/') && !warned) {
      err("Removing leading `/' from member names");
      warned = true;
    }
    // member names keep the path as given (relative to -C), without the leading slash
    const given = p.replace(/^\/+/, '').replace(/\/+$/, '');
    for (const [path, e] of ctx.fs.walk(full)) {
      const rel =
        path === full
          ? given
          : `${given}${given ? '/' : ''}${path.slice(full.length + (full === '/' ? 0 : 1))}`;
      const name = e.kind === 'dir' ? `${rel}/` : rel;
      if (o.verbose) io.stderr(te.encode(`${name}\n`));
      if (te.encode(name).length > 100 && !fitsUstar(name)) {
        const rec = te.encode(paxRecord('path', name));
        io.stdout(header(`PaxHeaders/${name.slice(-80)}`, 'x', rec.length, 0o644, e.mtime));
        io.stdout(rec);
        io.stdout(pad(rec.length));
      }
      const size = e.kind === 'file' ? e.data.length : 0;
      io.stdout(header(name, e.kind === 'dir' ? '5' : '0', size, e.mode, e.mtime));
      if (e.kind === 'file') {
        io.stdout(e.data);
        io.stdout(pad(size));
      }
    }
  }
  io.stdout(new Uint8Array(BLOCK * 2));
  if (failed) {
    err('Exiting with failure status due to previous errors');
    return 2;
  }
  return 0;
}

function fitsUstar(name: string): boolean {
  const cut = name.lastIndexOf('/');
  return (
    cut > 0 && te.encode(name.slice(0, cut)).length <= 155 && te.encode(name.slice(cut + 1)).length <= 100
  );
}

// ---------------------------------------------------------------------------------------------- read

interface Member {
  name: string;
  kind: string;
  mode: number;
  mtime: Date;
  data: Uint8Array;
}

function field(h: Uint8Array, at: number, len: number): string {
  const s = h.subarray(at, at + len);
  const nul = s.indexOf(0);
  return td.decode(nul < 0 ? s : s.subarray(0, nul));
}

function num(h: Uint8Array, at: number, len: number): number {
  // base-256 (GNU) for large values: high bit set on the first byte
  if (h[at]! & 0x80) {
    let n = 0;
    for (let i = at + 1; i < at + len; i++) n = n * 256 + h[i]!;
    return n;
  }
  const s = field(h, at, len).trim();
  return s ? Number.parseInt(s, 8) : 0;
}

/** Members of an archive; a message (GNU tar's words) when it is damaged. */
function* members(data: Uint8Array): Generator<Member, string | undefined> {
  let at = 0;
  let longName: string | undefined;
  while (at + BLOCK <= data.length) {
    const h = data.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) return undefined;
    const stored = num(h, 148, 8);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    if (stored !== sum) return 'This does not look like a tar archive';
    const size = num(h, 124, 12);
    const kind = String.fromCharCode(h[156]!) || '0';
    const body = data.subarray(at + BLOCK, at + BLOCK + size);
    if (body.length < size) return 'Unexpected EOF in archive';
    at += BLOCK + size + ((BLOCK - (size % BLOCK)) % BLOCK);
    if (kind === 'x') {
      for (const m of td.decode(body).matchAll(/\d+ ([^=]+)=([^\n]*)\n/g))
        if (m[1] === 'path') longName = m[2];
      continue;
    }
    if (kind === 'L') {
      longName = td.decode(body).replace(/\0+$/, '');
      continue;
    }
    if (kind === 'g') continue;
    const prefix = field(h, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    longName = undefined;
    yield {
      name,
      kind: kind === '\0' ? '0' : kind,
      mode: num(h, 100, 8),
      mtime: new Date(num(h, 136, 12) * 1000),
      data: body,
    };
  }
  return at === 0 && data.length === 0 ? 'This does not look like a tar archive' : undefined;
}

function extract(
  data: Uint8Array,
  o: Opts,
  io: TarIO,
  ctx: TarCtx,
  base: string,
  err: (s: string) => void,
): number {
  const it = members(data);
  let warnedSlash = false;
  let failed = false;
  for (let r = it.next(); ; r = it.next()) {
    if (r.done) {
      if (r.value) {
        err(r.value);
        err('Exiting with failure status due to previous errors');
        return 2;
      }
      break;
    }
    const m = r.value;
    let name = m.name;
    if (name.startsWith('/')) {
      if (!warnedSlash) err("Removing leading `/' from member names");
      warnedSlash = true;
      name = name.replace(/^\/+/, '');
    }
    // member names never climb out of the target directory
    const target = normalize(`${base}/${normalize(`/${name}`)}`);
    if (o.paths.length && !o.paths.some((p) => name === p || name.startsWith(`${p.replace(/\/+$/, '')}/`)))
      continue;
    if (o.verbose) io.stdout(te.encode(`${m.name}\n`));
    const mtime = o.keepMtime ? m.mtime : ctx.now();
    if (m.kind === '5') {
      if (!ctx.fs.mkdir(target, true, m.mode || 0o755)) {
        err(`${name}: Cannot mkdir: File exists`);
        failed = true;
      }
      continue;
    }
    if (m.kind !== '0' && m.kind !== '7') continue; // links and devices: not in this filesystem
    ctx.fs.mkdir(parentOf(target), true);
    if (!ctx.fs.writeFile(target, m.data.slice(), m.mode || 0o644, mtime)) {
      err(`${name}: Cannot open: Is a directory`);
      failed = true;
    }
  }
  if (failed) {
    err('Exiting with failure status due to previous errors');
    return 2;
  }
  return 0;
}

function list(data: Uint8Array, io: TarIO, err: (s: string) => void): number {
  const it = members(data);
  for (let r = it.next(); ; r = it.next()) {
    if (r.done) {
      if (r.value) {
        err(r.value);
        return 2;
      }
      return 0;
    }
    io.stdout(te.encode(`${r.value.name}\n`));
  }
}
