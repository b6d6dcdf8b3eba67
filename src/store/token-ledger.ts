/**
 * Single-use tokens in memory (the dashboard's redeemed sign-in links and ended sessions), each
 * kept until its expiry. `MemoryKeyStore` keeps one; shared stores keep theirs in the database.
 */
export class TokenLedger {
  private readonly used = new Map<string, number>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Records `tokenId` until `expiresAt`; true when it was not recorded (and unexpired) before. */
  mark(tokenId: string, expiresAt: string): boolean {
    const now = this.clock();
    if (this.has(tokenId, now)) return false;
    if (this.used.size >= 1024) this.sweep(now);
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
