/**
 * The optional fleet authorization policy: which users and groups may use which clusterspaces with which
 * verbs. It sits in front of the clusters' own RBAC and can only narrow it: absent, everything is allowed
 * here and each cluster decides; present, a request is allowed when some rule matches the identity the
 * request acts as (after `--as`), its clusterspace and its verb.
 */
import type { PolicyConfig } from '../config/security.ts';
import type { Identity } from './identity.ts';

export type PolicyDecision = { allowed: true } | { allowed: false; reason: string };

export class FleetPolicy {
  constructor(private readonly config: PolicyConfig | undefined) {}

  get enabled(): boolean {
    return this.config !== undefined;
  }

  decide(who: Identity, clusterspace: string, verb: string): PolicyDecision {
    if (!this.config) return { allowed: true };
    for (const r of this.config.rules) {
      const subject = !!r.users?.includes(who.user) || !!r.groups?.some((g) => who.groups.includes(g));
      if (!subject) continue;
      const cs = r.clusterspaces.includes('*') || r.clusterspaces.includes(clusterspace);
      const v = r.verbs.includes('*') || r.verbs.includes(verb);
      if (cs && v) return { allowed: true };
    }
    return {
      allowed: false,
      reason: `the fleet authorization policy does not allow ${verb} in clusterspace "${clusterspace}"`,
    };
  }
}
