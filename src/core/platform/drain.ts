/** Waiting for work to finish, within a bound: what graceful shutdown uses for in-flight checks and requests. */

/** Resolves true when `work` settled within `ms`, false when the bound passed first (the work is left running). */
export function settleWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    work.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}
