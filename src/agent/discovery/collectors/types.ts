/** A collector gathers one family of facts; the cycle times each and isolates its failure (node_exporter style). */
export interface CollectorContext {
  now(): number;
}

export interface Collector<T> {
  readonly id: string;
  collect(ctx: CollectorContext): T | Promise<T>;
}
