// What one instance of the leased-budget tests does: `n` requests, `concurrency` at a time, against one
// key (LeasedRateLimiter) or one account (LeasedCreditLedger). Shared by the Node child process
// (lease-child.ts) and the Worker (test/cloudflare/worker/leased.ts); no Node or Workers API here.
import type { LeasedCreditLedger, LeasedRateLimiter } from 'keygate';

/**
 * The deadline of the leased wrappers whose every unit and credit a test counts, in milliseconds:
 * longer than any store round trip on a loaded machine, so that no top-up lands past it and gives
 * its grant back later, after the test has counted.
 */
export const LATE_AFTER_MS = 30_000;

/** The hammer's settings, as a child's argv or a Worker's request body carries them. */
export interface HammerArgs {
  mode: 'limit' | 'credit';
  /** The key (limits) or the account (credits). */
  id: string;
  limit: number;
  windowMs: number;
  maxSlice: number;
  divisor: number;
  sliceTtlMs?: number;
  concurrency: number;
  /** Credits: the keys the request lanes alternate between. */
  keys?: string[];
}

/** What a run reports: requests allowed and refused, credits charged per key, units held at the end. */
export interface Ran {
  allowed: number;
  refused: number;
  charged: Record<string, number>;
  held: number;
}

/** Runs `n` requests through `limiter` or `ledger` as `args.mode` says. */
export async function hammer(
  args: HammerArgs,
  n: number,
  limiter: LeasedRateLimiter,
  ledger: LeasedCreditLedger,
): Promise<Ran> {
  const policy = { limit: args.limit, windowMs: args.windowMs };
  const keys = args.keys ?? ['key_a'];
  let next = 0;
  let allowed = 0;
  let refused = 0;
  const charged: Record<string, number> = {};
  const loop = async (lane: number) => {
    while (next < n) {
      next++;
      if (args.mode === 'limit') {
        if ((await limiter.consume(args.id, policy, 1)).allowed) allowed++;
        else refused++;
        continue;
      }
      const keyId = keys[lane % keys.length] as string;
      const held = await ledger.hold(args.id, 1, { keyId });
      if (!held.ok) {
        refused++;
        continue;
      }
      const settled = await ledger.settle(held.holdId);
      allowed++;
      charged[keyId] = (charged[keyId] ?? 0) + settled.charged;
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, (_, lane) => loop(lane)));
  // A top-up still in flight has been counted by the shared backend but is not held yet.
  await (args.mode === 'limit' ? limiter.idle() : ledger.idle());
  return { allowed, refused, charged, held: args.mode === 'limit' ? limiter.held(args.id) : ledger.free(args.id) };
}

/**
 * Holds and settles one credit at a time on `accountId` (as `keyId`) until a hold is refused: how many
 * were served. The fourth instance of the early-refusal cases.
 */
export async function spendUntilRefused(ledger: LeasedCreditLedger, accountId: string, keyId: string): Promise<number> {
  let n = 0;
  for (;;) {
    const held = await ledger.hold(accountId, 1, { keyId });
    if (!held.ok) return n;
    await ledger.settle(held.holdId);
    n++;
  }
}
