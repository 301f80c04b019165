/** Results recorded per minute: a count for the current wall-clock minute and the one before it (O(1) per result). */
export class ResultRate {
  private minute = 0;
  private current = 0;
  private previous = 0;

  add(nowMs: number): void {
    this.roll(nowMs);
    this.current++;
  }

  /** The count of the last complete minute. */
  perMinute(nowMs = Date.now()): number {
    this.roll(nowMs);
    return this.previous;
  }

  private roll(nowMs: number): void {
    const m = Math.floor(nowMs / 60_000);
    if (m === this.minute) return;
    this.previous = m === this.minute + 1 ? this.current : 0;
    this.current = 0;
    this.minute = m;
  }
}
