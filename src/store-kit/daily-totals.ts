import type { UsageCount } from '../vocabulary/usage-store.js';
import type { DailyTotal } from './dashboard-store.js';

/**
 * Counts added up per key and day, every outcome together: what a `DashboardStore`'s
 * `getDailyTotalsOfKeys` answers when it reads counts one key at a time.
 *
 * @example
 * dailyTotals([{ keyId: 'k', accountId: 'a', day: '2026-11-01', outcome: 'allowed', count: 2 }]) // [{ keyId: 'k', day: '2026-11-01', total: 2 }]
 */
export function dailyTotals(counts: readonly UsageCount[]): DailyTotal[] {
  const totals = new Map<string, { keyId: string; day: string; total: number }>();
  for (const c of counts) {
    const slot = `${c.keyId}\u0000${c.day}`;
    const entry = totals.get(slot) ?? { keyId: c.keyId, day: c.day, total: 0 };
    entry.total += c.count;
    totals.set(slot, entry);
  }
  return [...totals.values()];
}
