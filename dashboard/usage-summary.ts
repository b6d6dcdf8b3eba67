import type { DashboardStore } from 'keygate/store-kit';

/** A key's row in the list: requests per day (oldest first) and its last allowed use. */
export interface KeySummary {
  readonly daily: number[];
  readonly lastUsedAt: string | null;
  readonly lastUsedIp: string | null;
}

/**
 * Sparkline totals and last allowed use of `ids` over `days` (consecutive UTC days, oldest first):
 * two reads of the dashboard's store for the whole page, made together.
 */
export async function readSummaries(
  store: DashboardStore,
  ids: readonly string[],
  days: readonly string[],
): Promise<Map<string, KeySummary>> {
  const out = new Map<string, KeySummary>();
  if (ids.length === 0 || days.length === 0) return out;
  const index = new Map(days.map((d, i) => [d, i]));
  const [totals, activity] = await Promise.all([
    store.getDailyTotalsOfKeys(ids, days[0] as string, days.at(-1) as string),
    store.getActivityOfKeys(ids),
  ]);
  const daily = new Map(ids.map((id) => [id, new Array<number>(days.length).fill(0)]));
  for (const t of totals) {
    const row = daily.get(t.keyId);
    const i = index.get(t.day);
    if (row && i !== undefined) row[i] = (row[i] ?? 0) + t.total;
  }
  const last = new Map(activity.map((a) => [a.keyId, a]));
  for (const id of ids) {
    const a = last.get(id);
    out.set(id, { daily: daily.get(id) ?? [], lastUsedAt: a?.lastUsedAt ?? null, lastUsedIp: a?.lastUsedIp ?? null });
  }
  return out;
}
