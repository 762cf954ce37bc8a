/**
 * Issue 33's watch rows beside their floor: the same figures measured through the copy-only floor proxy
 * (./floor-watch.mjs) in the same rounds as direct and the fleet. Floor ÷ direct says what any proxy
 * reaches on this machine (a goal above it is out of reach of any proxy in a Node process on these cores);
 * fleet ÷ floor says what the fleet's own work costs on top of reading and writing the bytes.
 *
 * Ratios are medians of per-round ratios (each round's three figures measured back to back, the order
 * rotating), so a round's load cancels within it.
 */
import { judge, type Row33Check } from './goals33.ts';
import { fmt } from './report.ts';
import { median } from './stats.ts';

/** one figure per round and target, paired by index (round k of each measured in the same round) */
export interface FloorRounds {
  direct: number[];
  fleet: number[];
  floor: number[];
}

const perRound = (a: number[], b: number[]) => a.map((x, k) => x / b[k]!).filter((x) => Number.isFinite(x));
const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');

/** burst rates (events/s): the ratios, medians of per-round ratios */
export function burstRatios(r: FloorRounds) {
  const floorVsDirect = perRound(r.floor, r.direct);
  const fleetVsFloor = perRound(r.fleet, r.floor);
  const fleetVsDirect = perRound(r.fleet, r.direct);
  return {
    floorVsDirect: median(floorVsDirect),
    fleetVsFloor: median(fleetVsFloor),
    fleetVsDirect: median(fleetVsDirect),
    perRound: { floorVsDirect, fleetVsFloor, fleetVsDirect },
  };
}

/** the floor's clause for the `burst` row's detail */
export function burstFloorClause(r: FloorRounds): string {
  const b = burstRatios(r);
  return `floor proxy ${median(r.floor).toFixed(0)}/s: floor ÷ direct ${fmt.x(b.floorVsDirect)}, fleet ÷ floor ${fmt.x(b.fleetVsFloor)}`;
}

/** the `burst-floor` info row: floor ÷ direct, with fleet ÷ floor in its detail */
export function burstFloorRow(where: string, r: FloorRounds): Row33Check {
  const b = burstRatios(r);
  return {
    row: 'burst-floor',
    where,
    ratio: b.floorVsDirect,
    // judged against the goal it bounds, for the record; printed as [info]
    ok: judge(b.floorVsDirect, 0.9, true),
    detail:
      `${median(r.floor).toFixed(0)} vs ${median(r.direct).toFixed(0)} events/s; fleet ÷ floor ${fmt.x(b.fleetVsFloor)}` +
      ` (fleet ${median(r.fleet).toFixed(0)}/s); per round floor ÷ direct ${list(b.perRound.floorVsDirect)}, fleet ÷ floor ${list(b.perRound.fleetVsFloor)}`,
  };
}

/** p99 delays (ms) per round: what the floor adds over direct and the fleet over the floor, paired medians */
export function addedP99s(r: FloorRounds) {
  const floorAdded = r.floor.map((x, k) => x - r.direct[k]!);
  const fleetOverFloor = r.fleet.map((x, k) => x - r.floor[k]!);
  return { floorAdded: median(floorAdded), fleetOverFloor: median(fleetOverFloor) };
}

/** the `added-p99-floor` info row: the floor's added p99, the fleet's over the floor in its detail */
export function addedP99FloorRow(where: string, r: FloorRounds): Row33Check {
  const a = addedP99s(r);
  return {
    row: 'added-p99-floor',
    where,
    ratio: Number.NaN,
    shown: fmt.signedMs(a.floorAdded),
    ok: judge(a.floorAdded, 2),
    detail: `floor p99 ${fmt.ms(median(r.floor))} vs direct ${fmt.ms(median(r.direct))} ms; fleet − floor ${fmt.signedMs(a.fleetOverFloor)} (fleet p99 ${fmt.ms(median(r.fleet))} ms)`,
  };
}
