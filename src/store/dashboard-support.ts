import type { ApiKeyRecord } from '../types.js';
import type { UsageCount } from '../usage/types.js';

// What MemoryKeyStore keeps and answers for the dashboard (keygate/dashboard): used tokens and pages
// of the key list.

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

/**
 * A page of `records`, newest first (`createdAt`, then `id`, descending), only names containing
 * `nameContains` (case-insensitive) when given, and how many match: `MemoryKeyStore.listKeysPage`.
 */
export function pageOfKeys(
  records: readonly ApiKeyRecord[],
  page: { offset: number; limit: number; nameContains?: string },
): { records: ApiKeyRecord[]; total: number } {
  const needle = page.nameContains?.toLowerCase();
  const matching = (needle ? records.filter((r) => r.name.toLowerCase().includes(needle)) : [...records]).sort(
    (a, b) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1),
  );
  return { records: matching.slice(page.offset, page.offset + page.limit), total: matching.length };
}

/**
 * Counts added up per key and day, every outcome together: what a store's `getDailyTotalsOfKeys`
 * answers when it reads counts one key at a time.
 *
 * @example
 * dailyTotals([{ keyId: 'k', accountId: 'a', day: '2026-11-01', outcome: 'allowed', count: 2 }]) // [{ keyId: 'k', day: '2026-11-01', total: 2 }]
 */
export function dailyTotals(counts: readonly UsageCount[]): Array<{ keyId: string; day: string; total: number }> {
  const totals = new Map<string, { keyId: string; day: string; total: number }>();
  for (const c of counts) {
    const slot = `${c.keyId}\u0000${c.day}`;
    const entry = totals.get(slot) ?? { keyId: c.keyId, day: c.day, total: 0 };
    entry.total += c.count;
    totals.set(slot, entry);
  }
  return [...totals.values()];
}
