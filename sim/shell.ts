/**
 * A small POSIX-like shell for the simulated containers' `exec`. Pure: it sees the container only through
 * {@link ShellHost} (files, environment, clock, timers) and talks through {@link ShellIO}.
 *
 * Grammar (parsed in shell-parse.ts; a subset of POSIX sh, enough for what client libraries' end-to-end
 * tests and kubectl run):
 *   list     := and_or ((';' | '&' | newline) and_or)*
 *   and_or   := pipeline (('&&' | '||') pipeline)*
 *   pipeline := ['!'] command ('|' command)*
 *   command  := simple | 'for' NAME 'in' word* (';'|newline) 'do' list 'done'
 *             | 'if' list 'then' list ['else' list] 'fi' | '{' list '}'
 *   simple   := (NAME=value)* word* redirection*
 *   redirection := [n]'>' word | [n]'>>' word | '<' word | [n]'>&'n
 * Words: single quotes, double quotes (with `$VAR`, `${VAR}`, `$?`, `$(…)` and backslash escapes inside),
 * unquoted expansions split on blanks. Built-ins: echo, printf (%s, %d, \n), cat, env/printenv, true, false,
 * exit, sleep, seq, hostname, ls, date, pwd, cd, export, test/[, mkdir, rm, tar (tar.ts) and sh itself
 * (`sh -c '…'`, or reading commands from stdin line by line). A missing command prints `sh: foo: not found`
 * and sets 127, as BusyBox/dash do.
 */

import { type MemFs, normalize } from './memfs.ts';
import {
  type AndOr,
  type Cmd,
  type List,
  type Pipeline,
  parse,
  type Redir,
  ShellSyntaxError,
  type Word,
} from './shell-parse.ts';
import { tarCommand } from './tar.ts';

export interface ShellHost {
  hostname: string;
  /** stdin is a terminal: an interactive shell prompts and its input is echoed */
  tty?: boolean;
  env: Record<string, string>;
  fs: MemFs;
  now(): Date;
  /** resolves after ms, or rejects when the session is killed */
  sleep(ms: number): Promise<void>;
}

/** Byte streams of one command. `read()` gives the next stdin chunk, null at EOF. */
export interface ShellIO {
  stdout(d: Uint8Array): void;
  stderr(d: Uint8Array): void;
  read(): Promise<Uint8Array | null>;
}

const te = new TextEncoder();
const td = new TextDecoder();

// ---------------------------------------------------------------------------------------------- interpreter

/** `exit N` unwinds to the shell's top. */
class ExitSignal {
  constructor(readonly code: number) {}
}

interface Frame {
  vars: Record<string, string>;
  cwd: string;
  status: number;
  host: ShellHost;
}

export type Builtin = (args: string[], io: ShellIO, f: Frame) => Promise<number>;

export class Shell {
  private readonly frame: Frame;
  constructor(host: ShellHost) {
    this.frame = { vars: { ...host.env, PWD: '/' }, cwd: '/', status: 0, host };
  }

  /** Runs a script to the end; the exit status (syntax errors: 2, as dash). */
  async run(src: string, io: ShellIO): Promise<number> {
    let ast: List;
    try {
      ast = parse(src);
    } catch (e) {
      if (!(e instanceof ShellSyntaxError)) throw e;
      io.stderr(te.encode(`sh: ${e.message}\n`));
      this.frame.status = 2;
      return 2;
    }
    return this.list(ast, io);
  }

  get status(): number {
    return this.frame.status;
  }

  private async list(items: List, io: ShellIO): Promise<number> {
    for (const item of items) await this.andOr(item, io);
    return this.frame.status;
  }

  private async andOr(a: AndOr, io: ShellIO): Promise<number> {
    let s = await this.pipeline(a.first, io);
    for (const [op, p] of a.rest) {
      if ((op === '&&' && s === 0) || (op === '||' && s !== 0)) s = await this.pipeline(p, io);
    }
    return s;
  }

  /** Commands of a pipe run one after the other, each reading what the previous wrote. */
  private async pipeline(p: Pipeline, io: ShellIO): Promise<number> {
    let s = 0;
    let input: ShellIO['read'] = io.read;
    for (let i = 0; i < p.cmds.length; i++) {
      const last = i === p.cmds.length - 1;
      const captured: Uint8Array[] = [];
      const stage: ShellIO = {
        stdout: last ? io.stdout : (d) => captured.push(d),
        stderr: io.stderr,
        read: input,
      };
      s = await this.command(p.cmds[i]!, stage);
      if (!last) input = readerOf(concat(captured));
    }
    if (p.negate) s = s === 0 ? 1 : 0;
    this.frame.status = s;
    return s;
  }

  private async command(c: Cmd, io: ShellIO): Promise<number> {
    switch (c.t) {
      case 'group':
        return this.list(c.body, io);
      case 'if':
        if ((await this.list(c.cond, io)) === 0) return this.list(c.then, io);
        if (c.else) return this.list(c.else, io);
        this.frame.status = 0;
        return 0;
      case 'for': {
        const items: string[] = [];
        for (const w of c.items) items.push(...(await this.expand(w, io)));
        this.frame.status = 0;
        for (const v of items) {
          this.frame.vars[c.name] = v;
          await this.list(c.body, io);
        }
        return this.frame.status;
      }
      case 'simple':
        return this.simple(c, io);
    }
  }

  private async simple(c: Extract<Cmd, { t: 'simple' }>, io0: ShellIO): Promise<number> {
    const argv: string[] = [];
    for (const w of c.words) argv.push(...(await this.expand(w, io0)));
    const assigned: [string, string][] = [];
    for (const [k, w] of c.assigns) assigned.push([k, (await this.expand(w, io0, false)).join('')]);
    let io: ShellIO;
    try {
      io = await this.redirect(c.redirs, io0);
    } catch (e) {
      if (!(e instanceof RedirError)) throw e;
      io0.stderr(te.encode(`sh: ${e.message}\n`));
      return 1;
    }
    if (argv.length === 0) {
      for (const [k, v] of assigned) this.frame.vars[k] = v;
      return 0;
    }
    const saved = assigned.map(([k]) => [k, this.frame.vars[k]] as const);
    for (const [k, v] of assigned) this.frame.vars[k] = v;
    try {
      return await this.exec(argv, io);
    } finally {
      // assignments before a command are for that command only
      if (assigned.length)
        for (const [k, v] of saved) {
          if (v === undefined) delete this.frame.vars[k];
          else this.frame.vars[k] = v;
        }
      (io as { flush?: () => void }).flush?.();
    }
  }

  private async redirect(redirs: Redir[], io: ShellIO): Promise<ShellIO> {
    if (redirs.length === 0) return io;
    const out: ShellIO & { flush?: () => void } = { ...io };
    const flushes: Array<() => void> = [];
    for (const r of redirs) {
      const target = (await this.expand(r.target, io, false)).join('');
      if (r.op === '>&') {
        const to = target === '2' ? io.stderr : target === '1' ? io.stdout : undefined;
        if (!to) throw new RedirError(`${target}: bad file descriptor`);
        if (r.fd === 1) out.stdout = to;
        else if (r.fd === 2) out.stderr = to;
        continue;
      }
      const path = this.path(target);
      if (r.op === '<') {
        const data = this.frame.host.fs.readFile(path);
        if (data === undefined) throw new RedirError(`can't open ${target}: no such file`);
        out.read = readerOf(data);
        continue;
      }
      if (target === '/dev/null') {
        const sink = () => {};
        if (r.fd === 1) out.stdout = sink;
        else out.stderr = sink;
        continue;
      }
      const chunks: Uint8Array[] = [];
      const fs = this.frame.host.fs;
      if (!fs.writeFile(path, r.op === '>>' ? (fs.readFile(path) ?? new Uint8Array()) : new Uint8Array()))
        throw new RedirError(`can't create ${target}: nonexistent directory`);
      const sink = (d: Uint8Array) => chunks.push(d);
      if (r.fd === 1) out.stdout = sink;
      else out.stderr = sink;
      flushes.push(() => fs.writeFile(path, concat([fs.readFile(path) ?? new Uint8Array(), ...chunks])));
    }
    out.flush = () => {
      for (const f of flushes) f();
    };
    return out;
  }

  private path(p: string): string {
    return normalize(p.startsWith('/') ? p : `${this.frame.cwd}/${p}`);
  }

  /** Expands a word: variables, $(…), then field splitting of the unquoted results. */
  private async expand(w: Word, io: ShellIO, split = true): Promise<string[]> {
    const fields: string[] = [];
    let cur = '';
    let has = false;
    for (const p of w.parts) {
      let v: string;
      if (p.t === 'lit') {
        cur += p.v;
        has = true;
        continue;
      }
      if (p.t === 'var') v = this.variable(p.name);
      else v = await this.substitute(p.src, io);
      if (p.quoted || !split) {
        cur += v;
        has = true;
        continue;
      }
      const pieces = v.split(/[ \t\n]+/);
      for (let i = 0; i < pieces.length; i++) {
        if (i > 0) {
          if (has || cur) fields.push(cur);
          cur = '';
          has = false;
        }
        if (pieces[i]) {
          cur += pieces[i];
          has = true;
        }
      }
    }
    if (has || cur) fields.push(cur);
    return fields;
  }

  private variable(name: string): string {
    if (name === '?') return String(this.frame.status);
    if (name === '$') return '1';
    if (name === '#') return '0';
    return this.frame.vars[name] ?? '';
  }

  /** $(…): a subshell whose stdout becomes the value, trailing newlines removed. */
  private async substitute(src: string, io: ShellIO): Promise<string> {
    const out: Uint8Array[] = [];
    const sub = new Shell(this.frame.host);
    Object.assign(sub.frame, { vars: { ...this.frame.vars }, cwd: this.frame.cwd });
    let code: number;
    try {
      code = await sub.run(src, { stdout: (d) => out.push(d), stderr: io.stderr, read: io.read });
    } catch (e) {
      if (!(e instanceof ExitSignal)) throw e;
      code = e.code;
    }
    this.frame.status = code;
    return td.decode(concat(out)).replace(/\n+$/, '');
  }

  /** One command: a built-in, or `sh: x: not found` (127). */
  async exec(argv: string[], io: ShellIO): Promise<number> {
    const name = argv[0]!.replace(/^\/(usr\/)?(s?bin)\//, '');
    const b = BUILTINS[name];
    if (name === 'sh' || name === 'bash' || name === 'ash') return this.sh(argv.slice(1), io);
    if (!b || (argv[0]!.includes('/') && !/^\/(usr\/)?s?bin\//.test(argv[0]!))) {
      io.stderr(te.encode(`sh: ${argv[0]}: not found\n`));
      return 127;
    }
    return b(argv.slice(1), io, this.frame);
  }

  /** `sh -c script [name args…]`, `sh script-file`, or commands read from stdin one line at a time. */
  private async sh(args: string[], io: ShellIO): Promise<number> {
    const sub = new Shell(this.frame.host);
    Object.assign(sub.frame, { vars: { ...this.frame.vars }, cwd: this.frame.cwd });
    return runShell(sub, args, io);
  }
}

class RedirError extends Error {}

/** The shell as a process: what `exec` starts. Resolves with the exit status. */
export async function runShell(shell: Shell, args: string[], io: ShellIO): Promise<number> {
  try {
    // leading option bundles (`-c`, `-ec`, `-x -c`, `-i`): only -c changes what runs; the others are accepted
    let i = 0;
    let command = false;
    for (; i < args.length && /^[-+][a-z]+$/.test(args[i]!); i++) if (args[i]!.includes('c')) command = true;
    if (args[i] === '--') i++;
    const rest = args.slice(i);
    if (command) {
      if (rest[0] === undefined) {
        io.stderr(te.encode('sh: -c requires an argument\n'));
        return 2;
      }
      return await shell.run(rest[0], io);
    }
    if (rest[0] !== undefined) {
      const data = shell['frame'].host.fs.readFile(normalize(rest[0]));
      if (data === undefined) {
        io.stderr(te.encode(`sh: can't open '${rest[0]}': No such file or directory\n`));
        return 2;
      }
      return await shell.run(td.decode(data), io);
    }
    return await interactive(shell, io);
  } catch (e) {
    if (e instanceof ExitSignal) return e.code;
    throw e;
  }
}

/**
 * Reads stdin; each complete line (or block, for `for … done`) runs as soon as it is in. On a terminal it
 * prompts (`/ # `, BusyBox's for root) and does what the line discipline does: echo, backspace, ^C drops
 * the line, ^D on an empty line ends the input.
 */
async function interactive(shell: Shell, io: ShellIO): Promise<number> {
  const tty = shell['frame'].host.tty === true;
  const prompt = () => {
    if (tty) io.stdout(te.encode(`${shell['frame'].cwd} # `));
  };
  let pending = '';
  let buffered = '';
  const tryRun = async (final: boolean): Promise<void> => {
    while (true) {
      const nl = buffered.indexOf('\n');
      if (nl < 0 && !final) return;
      const line = nl < 0 ? buffered : buffered.slice(0, nl + 1);
      buffered = nl < 0 ? '' : buffered.slice(nl + 1);
      pending += line;
      if (pending.trim() === '') {
        pending = '';
        if (nl < 0) return;
        prompt();
        continue;
      }
      try {
        parse(pending);
      } catch (e) {
        // an open `for`/`if`/quote: wait for more lines, unless the input is over
        if (e instanceof ShellSyntaxError && /end of file|unterminated/.test(e.message) && !final) {
          if (tty) io.stdout(te.encode('> '));
          if (nl < 0) return;
          continue;
        }
      }
      const src = pending;
      pending = '';
      await shell.run(src, { ...io, read: async () => null });
      if (nl < 0) return;
      prompt();
    }
  };
  prompt();
  let line = '';
  while (true) {
    const chunk = await io.read();
    if (chunk === null) break;
    const text = td.decode(chunk, { stream: true });
    if (!tty) {
      buffered += text.replace(/\r\n?/g, '\n');
      await tryRun(false);
      continue;
    }
    for (const ch of text) {
      if (ch === '\x04') {
        if (line === '' && pending === '') return shell.status;
        continue;
      }
      if (ch === '\x03') {
        io.stdout(te.encode('^C\r\n'));
        line = '';
        pending = '';
        prompt();
        continue;
      }
      if (ch === '\x7f' || ch === '\b') {
        if (line) {
          line = line.slice(0, -1);
          io.stdout(te.encode('\b \b'));
        }
        continue;
      }
      if (ch === '\r' || ch === '\n') {
        io.stdout(te.encode('\r\n'));
        buffered += `${line}\n`;
        line = '';
        await tryRun(false);
        continue;
      }
      line += ch;
      io.stdout(te.encode(ch));
    }
  }
  buffered += line;
  await tryRun(true);
  return shell.status;
}

// ---------------------------------------------------------------------------------------------- built-ins

export function concat(chunks: Uint8Array[]): Uint8Array {
  const n = chunks.reduce((a, c) => a + c.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

export function readerOf(data: Uint8Array): () => Promise<Uint8Array | null> {
  let done = false;
  return async () => {
    if (done || data.length === 0) return null;
    done = true;
    return data;
  };
}

async function readAll(io: ShellIO): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for (let c = await io.read(); c !== null; c = await io.read()) chunks.push(c);
  return concat(chunks);
}

const say = (io: ShellIO, s: string) => io.stdout(te.encode(s));
const complain = (io: ShellIO, s: string) => io.stderr(te.encode(s));
const abs = (f: Frame, p: string) => normalize(p.startsWith('/') ? p : `${f.cwd}/${p}`);

/** `date` as coreutils prints it in UTC: `Tue Jan  2 15:04:05 UTC 2024`. */
export function dateString(d: Date): string {
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
}

function echoEscapes(s: string): string {
  return s.replace(/\\(n|t|\\)/g, (_, c) => (c === 'n' ? '\n' : c === 't' ? '\t' : '\\'));
}

const BUILTINS: Record<string, Builtin> = {
  async echo(args, io) {
    let newline = true;
    let escapes = false;
    while (args[0] === '-n' || args[0] === '-e') {
      if (args[0] === '-n') newline = false;
      else escapes = true;
      args = args.slice(1);
    }
    const text = args.join(' ');
    say(io, `${escapes ? echoEscapes(text) : text}${newline ? '\n' : ''}`);
    return 0;
  },
  async printf(args, io) {
    const [fmt = '', ...vals] = args;
    let i = 0;
    const out = echoEscapes(fmt).replace(/%([sd%])/g, (_, c) =>
      c === '%' ? '%' : (vals[i++] ?? (c === 'd' ? '0' : '')),
    );
    say(io, out);
    return 0;
  },
  async cat(args, io, f) {
    if (args.length === 0) args = ['-'];
    let code = 0;
    for (const a of args) {
      if (a === '-') {
        for (let c = await io.read(); c !== null; c = await io.read()) io.stdout(c);
        continue;
      }
      const p = abs(f, a);
      const data = f.host.fs.readFile(p);
      if (data !== undefined) io.stdout(data);
      else {
        complain(io, `cat: ${a}: ${f.host.fs.isDir(p) ? 'Is a directory' : 'No such file or directory'}\n`);
        code = 1;
      }
    }
    return code;
  },
  async env(args, io, f) {
    if (args.length) return execAfterEnv(args, io, f);
    say(
      io,
      Object.entries(f.vars)
        .filter(([k]) => k !== 'PWD' || true)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
    );
    return 0;
  },
  async printenv(args, io, f) {
    if (args.length) {
      const missing = args.some((a) => f.vars[a] === undefined);
      say(
        io,
        args
          .filter((a) => f.vars[a] !== undefined)
          .map((a) => `${f.vars[a]}\n`)
          .join(''),
      );
      return missing ? 1 : 0;
    }
    return BUILTINS.env!([], io, f);
  },
  async true() {
    return 0;
  },
  async false() {
    return 1;
  },
  async ':'() {
    return 0;
  },
  async exit(args, _io, f) {
    const n = args[0] === undefined ? f.status : Number(args[0]);
    throw new ExitSignal(Number.isInteger(n) ? ((n % 256) + 256) % 256 : 2);
  },
  async sleep(args, io, f) {
    const s = Number(args[0]);
    if (args[0] === undefined || !Number.isFinite(s) || s < 0) {
      complain(io, `sleep: invalid number '${args[0] ?? ''}'\n`);
      return 1;
    }
    await f.host.sleep(s * 1000);
    return 0;
  },
  async seq(args, io) {
    // BusyBox's: seq [-w] [-s SEP] [FIRST [INC]] LAST, numbers as given (decimals keep the widest precision)
    let sep = '\n';
    let pad = false;
    const nums: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === '-w') pad = true;
      else if (a === '-s') sep = args[++i] ?? '';
      else if (a.startsWith('-s') && a.length > 2 && Number.isNaN(Number(a))) sep = a.slice(2);
      else nums.push(a);
    }
    if (nums.length < 1 || nums.length > 3) {
      complain(io, 'Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n');
      return 1;
    }
    for (const n of nums)
      if (n.trim() === '' || !Number.isFinite(Number(n))) {
        complain(io, `seq: invalid number '${n}'\n`);
        return 1;
      }
    const [first, inc, last] =
      nums.length === 1
        ? ['1', '1', nums[0]!]
        : nums.length === 2
          ? [nums[0]!, '1', nums[1]!]
          : (nums as [string, string, string]);
    const places = Math.max(
      ...[first, inc].map((n) => (n.includes('.') ? n.length - n.indexOf('.') - 1 : 0)),
    );
    const [a, d, z] = [Number(first), Number(inc), Number(last)];
    const out: string[] = [];
    if (d !== 0)
      for (let k = 0; ; k++) {
        const v = a + k * d;
        if (d > 0 ? v > z + 1e-9 : v < z - 1e-9) break;
        out.push(v.toFixed(places));
      }
    const width = pad ? Math.max(0, ...out.map((o) => o.length)) : 0;
    if (out.length)
      say(io, `${out.map((o) => (o.startsWith('-') ? o : o.padStart(width, '0'))).join(sep)}\n`);
    return 0;
  },
  async hostname(_args, io, f) {
    say(io, `${f.host.hostname}\n`);
    return 0;
  },
  async date(_args, io, f) {
    say(io, `${dateString(f.host.now())}\n`);
    return 0;
  },
  async pwd(_args, io, f) {
    say(io, `${f.cwd}\n`);
    return 0;
  },
  async cd(args, io, f) {
    const p = abs(f, args[0] ?? f.vars.HOME ?? '/');
    if (!f.host.fs.isDir(p)) {
      complain(io, `sh: cd: can't cd to ${args[0]}: No such file or directory\n`);
      return 2;
    }
    f.cwd = p;
    f.vars.PWD = p;
    return 0;
  },
  async export(args, _io, f) {
    for (const a of args) {
      const eq = a.indexOf('=');
      if (eq > 0) f.vars[a.slice(0, eq)] = a.slice(eq + 1);
    }
    return 0;
  },
  async ls(args, io, f) {
    const paths = args.filter((a) => !a.startsWith('-'));
    let code = 0;
    for (const p of paths.length ? paths : [f.cwd]) {
      const full = abs(f, p);
      if (f.host.fs.isDir(full))
        say(
          io,
          f.host.fs
            .list(full)
            .map((x) => `${x}\n`)
            .join(''),
        );
      else if (f.host.fs.readFile(full) !== undefined) say(io, `${p}\n`);
      else {
        complain(io, `ls: cannot access '${p}': No such file or directory\n`);
        code = 2;
      }
    }
    return code;
  },
  async mkdir(args, io, f) {
    const parents = args.includes('-p');
    let code = 0;
    for (const a of args.filter((x) => !x.startsWith('-'))) {
      if (!f.host.fs.mkdir(abs(f, a), parents)) {
        complain(
          io,
          `mkdir: can't create directory '${a}': ${f.host.fs.exists(abs(f, a)) ? 'File exists' : 'No such file or directory'}\n`,
        );
        code = 1;
      }
    }
    return code;
  },
  async rm(args, io, f) {
    const force = args.some((a) => /^-[a-z]*f/.test(a));
    const recursive = args.some((a) => /^-[a-z]*r/i.test(a));
    let code = 0;
    for (const a of args.filter((x) => !x.startsWith('-'))) {
      const p = abs(f, a);
      if (!f.host.fs.exists(p)) {
        if (!force) {
          complain(io, `rm: can't remove '${a}': No such file or directory\n`);
          code = 1;
        }
      } else if (f.host.fs.isDir(p) && !recursive) {
        complain(io, `rm: '${a}' is a directory\n`);
        code = 1;
      } else f.host.fs.remove(p);
    }
    return code;
  },
  async test(args, _io, f) {
    return testExpr(args, f) ? 0 : 1;
  },
  async '['(args, io, f) {
    if (args[args.length - 1] !== ']') {
      complain(io, 'sh: [: missing ]\n');
      return 2;
    }
    return testExpr(args.slice(0, -1), f) ? 0 : 1;
  },
  async tar(args, io, f) {
    return tarCommand(args, io, { fs: f.host.fs, cwd: f.cwd, now: f.host.now, readAll: () => readAll(io) });
  },
};

async function execAfterEnv(args: string[], io: ShellIO, f: Frame): Promise<number> {
  const vars = { ...f.vars };
  let i = 0;
  for (; i < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!); i++) {
    const eq = args[i]!.indexOf('=');
    vars[args[i]!.slice(0, eq)] = args[i]!.slice(eq + 1);
  }
  if (i === args.length) {
    say(
      io,
      Object.entries(vars)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
    );
    return 0;
  }
  const sub = new Shell({ ...f.host, env: vars });
  return sub.exec(args.slice(i), io);
}

function testExpr(args: string[], f: Frame): boolean {
  if (args[0] === '!') return !testExpr(args.slice(1), f);
  if (args.length === 0) return false;
  if (args.length === 1) return args[0] !== '';
  if (args.length === 2) {
    const p = abs(f, args[1]!);
    switch (args[0]) {
      case '-d':
        return f.host.fs.isDir(p);
      case '-f':
        return f.host.fs.readFile(p) !== undefined;
      case '-e':
        return f.host.fs.exists(p);
      case '-n':
        return args[1] !== '';
      case '-z':
        return args[1] === '';
    }
    return false;
  }
  const [a, op, b] = args as [string, string, string];
  switch (op) {
    case '=':
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '-eq':
      return Number(a) === Number(b);
    case '-ne':
      return Number(a) !== Number(b);
    case '-lt':
      return Number(a) < Number(b);
    case '-gt':
      return Number(a) > Number(b);
    case '-le':
      return Number(a) <= Number(b);
    case '-ge':
      return Number(a) >= Number(b);
  }
  return false;
}

/** Whether the container has this program (the simulated image's /bin). */
export function hasProgram(argv0: string): boolean {
  const name = argv0.replace(/^\/(usr\/)?s?bin\//, '');
  if (argv0.includes('/') && !/^\/(usr\/)?s?bin\/[^/]+$/.test(argv0)) return false;
  return name === 'sh' || name === 'bash' || name === 'ash' || Object.hasOwn(BUILTINS, name);
}

/** Runs one exec'd program (argv as the kubelet passes it) to its exit status. */
export async function runProgram(host: ShellHost, argv: string[], io: ShellIO): Promise<number> {
  const shell = new Shell(host);
  try {
    return await shell.exec(argv, io);
  } catch (e) {
    if (e instanceof ExitSignal) return e.code;
    throw e;
  }
}
