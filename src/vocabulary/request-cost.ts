import type { AuthRequest } from './result.js';

/**
 * What one request costs under a `cost` option (the rate limit's units, the credits): the number
 * itself, or what the function answers for `request` when that is a whole number >= 0; -1 when the
 * function throws or answers anything else, which each row turns into its own failure.
 *
 * @example
 * requestCost(({ native }) => native.body.emails.length, request) // 25, or -1
 */
export function requestCost(cost: number | ((request: AuthRequest) => number), request: AuthRequest): number {
  if (typeof cost === 'number') return cost;
  try {
    const n = cost(request);
    return Number.isSafeInteger(n) && n >= 0 ? n : -1;
  } catch {
    return -1;
  }
}
