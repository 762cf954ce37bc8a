import { describe, expect, it } from 'vitest';
import { parseRequestInfo } from '../../request/info.ts';
import { isLongRunning } from './index.ts';

const info = (method: string, target: string) => {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  return parseRequestInfo(method, path, new URLSearchParams(q < 0 ? '' : target.slice(q)));
};

describe('isLongRunning (kube-apiserver LongRunningFunc: verbs watch, proxy; subresources attach, exec, proxy, log, portforward)', () => {
  it.each([
    ['GET', '/api/v1/pods?watch=true', true],
    ['GET', '/api/v1/namespaces/a/pods/p?watch=1', true],
    ['GET', '/api/v1/watch/namespaces/a/pods', true],
    ['GET', '/clusterspaces/m1/api/v1/pods?watch=True', true],
    // every log, following or not, as kube counts them (before, only follow=true or 1)
    ['GET', '/api/v1/namespaces/a/pods/p/log', true],
    ['GET', '/api/v1/namespaces/a/pods/p/log?follow=True', true],
    ['GET', '/api/v1/namespaces/a/pods/p/log?follow=false', true],
    ['POST', '/api/v1/namespaces/a/pods/p/exec?command=ls', true],
    ['GET', '/api/v1/namespaces/a/pods/p/attach', true],
    ['POST', '/api/v1/namespaces/a/pods/p/portforward', true],
    ['GET', '/api/v1/namespaces/a/services/s/proxy/metrics', true],
    ['GET', '/api/v1/nodes/n/proxy/stats', true],
    // a non-resource request under /debug/pprof/, the path the cluster is asked
    ['GET', '/debug/pprof/profile', true],
    ['GET', '/clusterspaces/m1/debug/pprof/heap', true],
    ['GET', '/debug/pprof', false],
    ['GET', '/api/v1/namespaces/a/pods/p', false],
    ['GET', '/api/v1/pods', false],
    ['PUT', '/api/v1/namespaces/a/pods/p/status', false],
    ['GET', '/apis/apps/v1/namespaces/a/deployments/d/scale', false],
    ['GET', '/api/v1/namespaces/a/pods?watch=false', false],
    ['GET', '/healthz', false],
    ['GET', '/api', false],
  ])('%s %s → %s', (method, target, want) => {
    expect(isLongRunning(info(method, target))).toBe(want);
  });

  it('is false without request info (a request refused before it was parsed)', () => {
    expect(isLongRunning(undefined)).toBe(false);
  });
});
