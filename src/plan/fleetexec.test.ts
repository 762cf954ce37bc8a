import { describe, expect, it } from 'vitest';
import {
  execPath,
  exitOf,
  isFleetExec,
  LineSplitter,
  podListPath,
  readFleetExec,
  runnablePods,
  summarize,
} from './fleetexec.ts';

const q = (s: string) => new URLSearchParams(s);

describe('fleet exec plan', () => {
  it('is the fleet group’s podexecs collection only', () => {
    expect(isFleetExec({ apiGroup: 'fleet.karmada.io', resource: 'podexecs', name: '' })).toBe(true);
    expect(isFleetExec({ apiGroup: 'fleet.karmada.io', resource: 'podexecs', name: 'x' })).toBe(false);
    expect(isFleetExec({ apiGroup: '', resource: 'podexecs', name: '' })).toBe(false);
  });

  it('reads the ask; refuses what is missing or out of range with a 400', () => {
    const ask = readFleetExec(
      'shop',
      q('labelSelector=app%3Dweb&command=sh&command=-c&command=echo+a+b&container=c'),
    );
    expect(ask).toEqual({
      namespace: 'shop',
      labelSelector: 'app=web',
      command: ['sh', '-c', 'echo a b'],
      container: 'c',
      clusterspace: 'all',
      maxConcurrency: 8,
    });
    for (const bad of [
      'command=x',
      'labelSelector=a',
      'labelSelector=a&command=x&maxConcurrency=0',
      'labelSelector=a&command=x&maxConcurrency=1.5',
    ])
      expect((readFleetExec('shop', q(bad)) as { code: number }).code).toBe(400);
    expect((readFleetExec('', q('labelSelector=a&command=x')) as { code: number }).code).toBe(400);
  });

  it('builds the list and exec paths kube reads', () => {
    const ask = readFleetExec(
      'shop',
      q('labelSelector=app%3Dweb&command=sh&command=-c&command=exit+3&clusterspace=member2'),
    ) as any;
    expect(ask.clusterspace).toBe('member2');
    expect(podListPath(ask)).toBe('/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb');
    expect(execPath(ask, 'web-1')).toBe(
      '/api/v1/namespaces/shop/pods/web-1/exec?command=sh&command=-c&command=exit+3&stdout=true&stderr=true',
    );
  });

  it('skips finished pods', () => {
    const list = {
      items: [
        { metadata: { name: 'a' }, status: { phase: 'Running' } },
        { metadata: { name: 'b' }, status: { phase: 'Succeeded' } },
        { metadata: { name: 'c' }, status: { phase: 'Pending' } },
        { metadata: {} },
      ],
    };
    expect(runnablePods(list)).toEqual(['a', 'c']);
    expect(runnablePods(null)).toEqual([]);
  });

  it('reads the exit code from the error channel’s Status', () => {
    expect(exitOf('{"status":"Success"}')).toEqual({ exitCode: 0 });
    expect(
      exitOf(
        JSON.stringify({
          status: 'Failure',
          reason: 'NonZeroExitCode',
          details: { causes: [{ reason: 'ExitCode', message: '3' }] },
        }),
      ),
    ).toEqual({ exitCode: 3 });
    expect(exitOf('{"status":"Failure","message":"executable file not found"}')).toEqual({
      error: 'executable file not found',
    });
    expect(exitOf('garbage')).toEqual({ error: 'garbage' });
  });

  it('splits lines across chunks and multi-byte characters', () => {
    const s = new LineSplitter();
    const bytes = new TextEncoder().encode('a\r\nbé\nc');
    expect(s.push(bytes.subarray(0, 5))).toEqual(['a']);
    expect(s.push(bytes.subarray(5))).toEqual(['bé']);
    expect(s.end()).toEqual(['c']);
    expect(s.end()).toEqual([]);
  });

  it('summarizes exit codes, errors and clusters not asked', () => {
    const s = summarize(
      new Map([
        ['a', { exitCode: 0 }],
        ['b', { exitCode: 3 }],
        ['c', { error: 'refused' }],
      ]),
      new Map([['member3', 'unreachable']]),
    );
    expect(s).toEqual({
      pods: 3,
      succeeded: 1,
      failed: { b: 3, c: 'refused' },
      clusters: { member3: 'unreachable' },
    });
  });
});
