import type { DenialCode } from '../vocabulary/denials.js';
import type { KeyActivity, UsageCount, UsageReport } from '../vocabulary/usage-store.js';

type Tally = { allowed: number; denied: number; deniedBy: Partial<Record<DenialCode, number>> };

function add(t: Tally, c: UsageCount): void {
  if (c.outcome === 'allowed') t.allowed += c.count;
  else {
    t.denied += c.count;
    t.deniedBy[c.outcome] = (t.deniedBy[c.outcome] ?? 0) + c.count;
  }
}

/**
 * Folds a key's raw counts into a report: totals, denials by reason, and one entry per day with traffic.
 *
 * @example
 * summarizeUsage('key_1', '2026-11-01', '2026-11-30', counts, activity).allowed
 */
export function summarizeUsage(
  keyId: string,
  from: string,
  to: string,
  counts: readonly UsageCount[],
  activity: KeyActivity | null,
): UsageReport {
  const total: Tally = { allowed: 0, denied: 0, deniedBy: {} };
  const byDay = new Map<string, Tally>();
  for (const c of counts) {
    add(total, c);
    const day = byDay.get(c.day) ?? { allowed: 0, denied: 0, deniedBy: {} };
    byDay.set(c.day, day);
    add(day, c);
  }
  const days = [...byDay.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, t]) => ({ day, ...t }));
  return {
    keyId,
    from,
    to,
    ...total,
    days,
    lastUsedAt: activity?.lastUsedAt ?? null,
    lastUsedIp: activity?.lastUsedIp ?? null,
  };
}
