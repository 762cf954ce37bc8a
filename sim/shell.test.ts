import { describe, expect, it } from 'vitest';
import { MemFs } from './memfs.ts';
import { runProgram, type ShellHost } from './shell.ts';

const te = new TextEncoder();
const td = new TextDecoder();

function host(slept: number[] = []): ShellHost {
  const fs = new MemFs(() => new Date('2026-01-02T15:04:05Z'));
  fs.mkdir('/tmp');
  fs.mkdir('/etc');
  fs.writeFile('/etc/hostname', 'web-0\n');
  return {
    hostname: 'web-0',
    env: { HOME: '/root', PATH: '/bin' },
    fs,
    now: () => new Date('2026-01-02T15:04:05Z'),
    sleep: async (ms) => {
      slept.push(ms);
    },
  };
}

/** Runs argv; stdin chunks fed one by one (then EOF). */
async function run(argv: string[], opts: { stdin?: (string | Uint8Array)[]; h?: ShellHost } = {}) {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const chunks = [...(opts.stdin ?? [])];
  const code = await runProgram(opts.h ?? host(), argv, {
    stdout: (d) => out.push(d),
    stderr: (d) => err.push(d),
    read: async () => {
      const c = chunks.shift();
      return c === undefined ? null : typeof c === 'string' ? te.encode(c) : c;
    },
  });
  const text = (cs: Uint8Array[]) => cs.map((c) => td.decode(c)).join('');
  return { code, out: text(out), err: text(err), bytes: out };
}
const sh = (script: string, stdin?: string[], h?: ShellHost) => run(['sh', '-c', script], { stdin, h });

describe('sim shell', () => {
  it('sh -c "sleep 1; exit 3" sleeps then exits 3', async () => {
    const slept: number[] = [];
    const r = await sh('sleep 1; exit 3', [], host(slept));
    expect(r.code).toBe(3);
    expect(slept).toEqual([1000]);
  });

  it('runs ; && || ! with the right statuses', async () => {
    expect((await sh('false && echo no || echo yes')).out).toBe('yes\n');
    expect((await sh('true && echo a; false; echo $?')).out).toBe('a\n1\n');
    expect((await sh('! false && echo negated')).out).toBe('negated\n');
    expect((await sh('false')).code).toBe(1);
    expect((await sh('exit 300')).code).toBe(44);
    expect((await run(['/bin/sh', '-ec', 'echo bundled'])).out).toBe('bundled\n');
    expect((await run(['bash', '-x', '-c', 'exit 4'])).code).toBe(4);
  });

  it('expands variables, $(…), quotes, and splits unquoted fields', async () => {
    expect((await sh('X="a  b"; echo $X; echo "$X"; echo \'$X\'')).out).toBe('a b\na  b\n$X\n');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: ${HOME} is shell syntax, the point of the test
    expect((await sh('echo "host: $(hostname)" ${HOME}')).out).toBe('host: web-0 /root\n');
    expect((await sh('for w in $(echo one two); do echo "<$w>"; done')).out).toBe('<one>\n<two>\n');
    expect((await sh('A=1 env | grep -c x; echo $A.')).out).toContain('.\n');
  });

  it('loops, branches and redirects', async () => {
    expect((await sh('for x in a b; do echo $x; done')).out).toBe('a\nb\n');
    expect((await sh('for i in 1 2 3\ndo\n  echo -n $i\ndone')).out).toBe('123');
    expect((await sh('if [ -d /tmp ]; then echo dir; else echo no; fi')).out).toBe('dir\n');
    const r = await sh('echo oops >&2; echo fine');
    expect(r.err).toBe('oops\n');
    expect(r.out).toBe('fine\n');
    const h = host();
    await sh('echo one > /tmp/f; echo two >> /tmp/f', [], h);
    expect((await sh('cat /tmp/f; cat < /tmp/f | cat', [], h)).out).toBe('one\ntwo\none\ntwo\n');
    expect((await sh('echo x 2>&1 >/dev/null')).out).toBe('');
  });

  it('answers a missing command like a real shell: message and 127', async () => {
    const r = await sh('foo bar');
    expect(r).toMatchObject({ code: 127, err: 'sh: foo: not found\n', out: '' });
    expect((await sh('foo || echo "status $?"')).out).toBe('status 127\n');
  });

  it('reports syntax errors with status 2', async () => {
    const r = await sh('for x in a; do echo');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^sh: syntax error/);
    expect((await sh('echo "open')).code).toBe(2);
  });

  it('an interactive sh runs each line as it arrives, and blocks once complete', async () => {
    const r = await run(['sh'], {
      stdin: ['echo one\nech', 'o two\n', 'for x in a b\n', 'do echo $x; done\n', 'exit 7\n', 'echo never\n'],
    });
    expect(r.out).toBe('one\ntwo\na\nb\n');
    expect(r.code).toBe(7);
    const eof = await run(['/bin/sh'], { stdin: ['false\n'] });
    expect(eof.code).toBe(1);
  });

  it('cat copies stdin, echo/printf/env/date/ls work', async () => {
    expect((await run(['cat'], { stdin: ['a', 'b'] })).out).toBe('ab');
    expect((await sh('printf "%s-%d\\n" x 5')).out).toBe('x-5\n');
    expect((await run(['env'])).out).toContain('HOME=/root\n');
    expect((await run(['date'])).out).toBe('Fri Jan  2 15:04:05 UTC 2026\n');
    expect((await run(['ls', '/'])).out).toBe('etc\ntmp\n');
    expect((await run(['ls', '/nope'])).code).toBe(2);
  });
});

describe('sim tar (what kubectl cp runs)', () => {
  it('round-trips files and directories: tar cf - <path> into tar -xmf - -C <dir>', async () => {
    const h = host();
    await sh('mkdir -p /data/sub; echo hello > /data/a.txt; echo deep > /data/sub/b.txt', [], h);
    const packed = await run(['tar', 'cf', '-', '/data'], { h });
    expect(packed.code).toBe(0);
    expect(packed.err).toBe("tar: Removing leading `/' from member names\n");
    const archive = new Uint8Array(packed.bytes.reduce((n, b) => n + b.length, 0));
    let o = 0;
    for (const b of packed.bytes) {
      archive.set(b, o);
      o += b.length;
    }
    expect(archive.length % 512).toBe(0);
    const h2 = host();
    const un = await run(['tar', '-xmf', '-', '-C', '/tmp'], {
      h: h2,
      stdin: [archive.subarray(0, 700), archive.subarray(700)],
    });
    expect(un).toMatchObject({ code: 0, err: '' });
    expect((await sh('cat /tmp/data/a.txt /tmp/data/sub/b.txt', [], h2)).out).toBe('hello\ndeep\n');
    expect((await run(['tar', 'tf', '-'], { h: h2, stdin: [archive] })).out).toBe(
      'data/\ndata/a.txt\ndata/sub/\ndata/sub/b.txt\n',
    );
  });

  it('fails like GNU tar on a missing path or a broken archive', async () => {
    const miss = await run(['tar', 'cf', '-', '/nope']);
    expect(miss.code).toBe(2);
    expect(miss.err).toContain('tar: /nope: Cannot stat: No such file or directory');
    const bad = await run(['tar', 'xf', '-'], { stdin: [new Uint8Array(512).fill(7)] });
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('This does not look like a tar archive');
    expect((await run(['tar', '-xmf', '-', '-C', '/missing'])).err).toContain('/missing: Cannot open');
  });
});

describe('sim shell on a terminal', () => {
  it('prompts, echoes what is typed, handles backspace, ^C and ^D', async () => {
    const h = { ...host(), tty: true };
    const r = await run(['sh'], { h, stdin: ['echo hi\r', 'ech\x7fho x\r', 'junk\x03', '\x04'] });
    expect(r.out).toBe('/ # echo hi\r\nhi\n/ # ech\b \bho x\r\nx\n/ # junk^C\r\n/ # ');
    expect(r.code).toBe(0);
  });
});

describe('sim shell robustness', () => {
  it('any script ends with a status, never an exception', async () => {
    const fc = (await import('fast-check')).default;
    const piece = fc.constantFrom(
      'echo',
      'a',
      '"',
      "'",
      '$(',
      ')',
      ';',
      '&&',
      '||',
      '|',
      'for',
      'in',
      'do',
      'done',
      'if',
      'then',
      'fi',
      '>',
      '>&2',
      '<',
      '$x',
      '${',
      '}',
      ' ',
      '\n',
      'exit',
      '3',
      'cat',
      'tar',
      'xf',
      '-',
      '\\',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 14 }), async (ps) => {
        const r = await sh(ps.join(' '));
        expect(Number.isInteger(r.code)).toBe(true);
        expect(r.code).toBeGreaterThanOrEqual(0);
        expect(r.code).toBeLessThan(256);
      }),
      { numRuns: 400 },
    );
  });
});

describe('seq, as BusyBox has it', () => {
  it('counts as scripts use it: LAST, FIRST LAST, FIRST INC LAST, -s and -w', async () => {
    expect((await sh('seq 3')).out).toBe('1\n2\n3\n');
    expect((await sh('for i in $(seq 2 4); do echo "n$i"; done')).out).toBe('n2\nn3\nn4\n');
    expect((await sh('seq 10 -3 1')).out).toBe('10\n7\n4\n1\n');
    expect((await sh('seq -s , 3')).out).toBe('1,2,3\n');
    expect((await sh('seq -w 8 10')).out).toBe('08\n09\n10\n');
    expect((await sh('seq 0 0.5 1')).out).toBe('0.0\n0.5\n1.0\n');
    expect((await sh('seq 3 1')).out).toBe('');
  });

  it('refuses what is not a number', async () => {
    const r = await sh('seq x');
    expect([r.code, r.err]).toEqual([1, "seq: invalid number 'x'\n"]);
  });
});
