/**
 * Commands the harness sends to its helper processes (./child.ts), over Node's IPC channel.
 * A helper hosts one or more roles: `upstream` (the simulated clusters), `fleet`, `load` (autocannon).
 */
import type { FleetConfigInput } from '../../src/config/schema.ts';
import type { FleetVariant } from '../cases/types.ts';
import type { LoadResult, LoadSpec } from './load.ts';

export type Role = 'upstream' | 'fleet' | 'load';

export interface UpstreamInfo {
  memberUrls: Record<string, string>;
  karmadaUrl: string;
  configs: Record<FleetVariant, FleetConfigInput>;
}

export interface Commands {
  'upstream.start': { arg: { members: string[] }; result: UpstreamInfo };
  'upstream.setup': { arg: { case: string }; result: null };
  'upstream.teardown': { arg: { case: string }; result: null };
  'fleet.start': { arg: { variant: FleetVariant; config: FleetConfigInput }; result: { url: string } };
  'load.run': { arg: LoadSpec; result: LoadResult };
  /** one of a case's own actions (BenchCase.upstreamActions / loadActions), in this process */
  'case.action': {
    arg: { case: string; role: 'upstream' | 'load'; action: string; arg: unknown };
    result: unknown;
  };
  /** process.memoryUsage() of this process, after a full GC (through the inspector) when `gc` */
  'proc.memory': { arg: { gc: boolean }; result: NodeJS.MemoryUsage };
  /** a V8 heap snapshot of this process (after a full GC), written to `path` */
  'proc.heapSnapshot': { arg: { path: string }; result: { path: string } };
  /** V8 CPU profile of this process from now on (the steady state only, not startup) */
  'profile.start': { arg: null; result: null };
  /** ends the profile and writes it as a .cpuprofile file */
  'profile.stop': { arg: { path: string }; result: { path: string } };
  /** stop everything and exit (so that --cpu-prof writes its profile) */
  exit: { arg: null; result: null };
}

export type Command = keyof Commands;

export interface CallMessage {
  id: number;
  cmd: Command;
  arg: unknown;
}

export type ReplyMessage =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: string };
