/**
 * When a leased slice (a limiter's units, a ledger's credits) is topped up in the background: once
 * what is left of the `size` a take gave it falls to the returned count (-1: never; a slice of 0 or 1
 * waits for the request that runs it dry). At half the slice, or earlier when the previous top-up
 * saw more than a quarter of the slice spent while it was in flight (`drain`): twice that, so that a
 * slow store or a busy key still finds the next units in place before the slice runs dry. Never
 * later than three quarters of the slice, so that each top-up takes at least a quarter of `maxSlice`
 * and a key costs at most one round trip per `maxSlice / 4` units, however slow its store. Where the
 * point sits never changes how much a process holds (at most `maxSlice - 1`), so the early-refusal
 * bound stands.
 *
 * @example
 * refillPoint(300, 0); // 150: a fast store, the top-up lands long before the slice runs dry
 * refillPoint(300, 100); // 200: 100 units went while the last top-up was in flight
 * refillPoint(300, 250); // 225: at most three quarters
 */
export function refillPoint(size: number, drain: number): number {
  if (size < 2) return -1;
  return Math.min(Math.floor((size * 3) / 4), Math.max(Math.floor(size / 2), 2 * drain));
}
