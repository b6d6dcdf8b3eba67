import type { KeyActivity, UsageBatch, UsageCount } from '../vocabulary/usage-store.js';

/**
 * A batch with one count per (key, day, outcome) and one activity per key (the newest), so that a
 * store can write it as one upsert per row. Counts are summed, never dropped.
 *
 * @example
 * mergeUsage({ counts: [a, a], activity: [] }).counts // one row with count a.count * 2
 */
export function mergeUsage(batch: UsageBatch): UsageBatch {
  const counts = new Map<string, UsageCount>();
  for (const c of batch.counts) {
    const slot = `${c.keyId}\u0000${c.day}\u0000${c.outcome}`;
    const prior = counts.get(slot);
    counts.set(slot, prior ? { ...prior, count: prior.count + c.count } : c);
  }
  const activity = new Map<string, KeyActivity>();
  for (const a of batch.activity) {
    const prior = activity.get(a.keyId);
    if (!prior || prior.lastUsedAt < a.lastUsedAt) activity.set(a.keyId, a);
  }
  return { counts: [...counts.values()], activity: [...activity.values()] };
}
