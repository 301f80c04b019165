/**
 * How far this instance's wall clock is from PostgreSQL's, estimated from the heartbeats (docs/cluster.md "Clocks").
 * Leases, membership and claims use PostgreSQL's clock only, but a result's timestamp and an alert's `createdMs`
 * (the delivery order across instances) are the instance's own, so members whose clocks disagree write a history
 * that jumps at a handover. Each heartbeat is one sample: wall time before (t0) and after (t1) the statement and the
 * database's clock_timestamp() inside it, so offset = (t0 + t1) / 2 − db, within ± (t1 − t0) / 2. Of the last
 * `window` samples the one with the shortest round trip is kept (NTP's minimum-delay filter): a slow heartbeat on a
 * loaded box widens the bound instead of skewing the estimate.
 */

export interface ClockSample {
  offsetMs: number;
  /** Half the round trip: the true offset is within offsetMs ± uncertaintyMs. */
  uncertaintyMs: number;
}

/** Above this the coordinator logs a warning and the dashboard marks the member. */
export const CLOCK_SKEW_WARN_MS = 2_000;

export class ClockOffset {
  private readonly samples: ClockSample[] = [];

  constructor(private readonly window = 12) {}

  /** Adds one heartbeat's sample; returns the current estimate. */
  add(sentWallMs: number, receivedWallMs: number, dbNowMs: number): ClockSample {
    const rtt = Math.max(0, receivedWallMs - sentWallMs);
    this.samples.push({ offsetMs: Math.round(sentWallMs + rtt / 2 - dbNowMs), uncertaintyMs: Math.ceil(rtt / 2) });
    if (this.samples.length > this.window) this.samples.shift();
    return this.estimate()!;
  }

  /** The sample with the shortest round trip of the window; undefined before the first heartbeat. */
  estimate(): ClockSample | undefined {
    let best: ClockSample | undefined;
    for (const s of this.samples) if (!best || s.uncertaintyMs < best.uncertaintyMs) best = s;
    return best;
  }

  /** True when the offset is beyond the warning bound even at the near end of its uncertainty. */
  static skewed(s: ClockSample | undefined, boundMs = CLOCK_SKEW_WARN_MS): boolean {
    return s !== undefined && Math.abs(s.offsetMs) - s.uncertaintyMs > boundMs;
  }
}
