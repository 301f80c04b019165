/**
 * Interns schedule specs by key, so every monitor with the same expression shares one spec object and its next-fire
 * memo: at each fire time the (possibly slow) cron computation runs once per distinct expression, not per monitor.
 * Reference-counted so specs of removed or edited monitors are dropped.
 */
import type { ScheduleSpec } from './schedule.js';

export interface SpecRegistry {
  /** The shared spec for `spec.key` (counts one reference). */
  intern(spec: ScheduleSpec): ScheduleSpec;
  /** Drops one reference of a spec obtained from intern(). */
  release(spec: ScheduleSpec): void;
  readonly size: number;
}

export function createSpecRegistry(): SpecRegistry {
  const byKey = new Map<string, { spec: ScheduleSpec; refs: number }>();
  return {
    intern(spec) {
      const slot = byKey.get(spec.key);
      if (slot !== undefined) {
        slot.refs++;
        return slot.spec;
      }
      byKey.set(spec.key, { spec, refs: 1 });
      return spec;
    },
    release(spec) {
      const slot = byKey.get(spec.key);
      if (slot === undefined || slot.spec !== spec) return;
      if (--slot.refs <= 0) byKey.delete(spec.key);
    },
    get size() {
      return byKey.size;
    },
  };
}
