/** Records kept before expired ones are swept out, so a busy process holds no more than it needs. */
const SWEEP_AT = 1024;

/**
 * Single-use tokens in this process's memory (the dashboard's redeemed sign-in links and ended
 * sessions), each kept until its expiry: the token half of `MemoryDashboardStore`.
 *
 * @example
 * const ledger = new TokenLedger();
 * ledger.mark('sign-in:abc', new Date(Date.now() + 900_000).toISOString()); // true
 * ledger.mark('sign-in:abc', new Date(Date.now() + 900_000).toISOString()); // false: used
 */
export class TokenLedger {
  // tokenId -> epoch milliseconds of its expiry.
  private readonly used = new Map<string, number>();

  /** `clock`: current time in epoch milliseconds. Default `Date.now`. */
  constructor(private readonly clock: () => number = Date.now) {}

  /** Records `tokenId` until `expiresAt` (ISO-8601); true when it was not recorded (and unexpired) before. */
  mark(tokenId: string, expiresAt: string): boolean {
    const now = this.clock();
    if (this.has(tokenId, now)) return false;
    if (this.used.size >= SWEEP_AT) this.sweep(now);
    this.used.set(tokenId, Date.parse(expiresAt));
    return true;
  }

  /** True when `tokenId` is recorded and has not expired. */
  has(tokenId: string, now = this.clock()): boolean {
    const until = this.used.get(tokenId);
    return until !== undefined && !(until <= now);
  }

  private sweep(now: number): void {
    for (const [id, until] of this.used) if (until <= now) this.used.delete(id);
  }
}
