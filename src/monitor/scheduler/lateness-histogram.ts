/**
 * A log-linear histogram of non-negative millisecond values (HDR-style): exact below 64 ms, then 32 sub-buckets per
 * power of two (≤ 3.2 % relative error). Fixed memory (~7 KB), O(1) record; percentiles read from the buckets.
 */
const LINEAR = 64;
const SUB_BITS = 5;
const SUB = 1 << SUB_BITS;
const MAX_EXP = 40;
const BUCKETS = LINEAR + (MAX_EXP - 6) * SUB;

export interface LatenessSummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

export class LatenessHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  private n = 0;
  private sum = 0;
  private max = 0;

  record(valueMs: number): void {
    const v = Math.max(0, Math.round(valueMs));
    this.counts[bucketOf(v)]!++;
    this.n++;
    this.sum += v;
    if (v > this.max) this.max = v;
  }

  get count(): number {
    return this.n;
  }

  /** The value at quantile q (0..1): the upper edge of the bucket holding it, capped at the max seen. */
  quantile(q: number): number {
    if (this.n === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.n));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(upperEdge(i), this.max);
    }
    return this.max;
  }

  summary(): LatenessSummary {
    return {
      count: this.n,
      meanMs: this.n === 0 ? 0 : Math.round((this.sum / this.n) * 10) / 10,
      p50Ms: this.quantile(0.5),
      p90Ms: this.quantile(0.9),
      p99Ms: this.quantile(0.99),
      maxMs: this.max,
    };
  }

  reset(): void {
    this.counts.fill(0);
    this.n = 0;
    this.sum = 0;
    this.max = 0;
  }
}

function bucketOf(v: number): number {
  if (v < LINEAR) return v;
  const exp = Math.min(MAX_EXP - 1, Math.floor(Math.log2(v)));
  const sub = Math.floor(v / 2 ** (exp - SUB_BITS)) & (SUB - 1);
  return Math.min(BUCKETS - 1, LINEAR + (exp - 6) * SUB + sub);
}

function upperEdge(bucket: number): number {
  if (bucket < LINEAR) return bucket;
  const exp = 6 + Math.floor((bucket - LINEAR) / SUB);
  const sub = (bucket - LINEAR) % SUB;
  return (SUB + sub + 1) * 2 ** (exp - SUB_BITS) - 1;
}
