import { dailyTotals, type KeyActivity, type UsageStore } from 'keygate/store-kit';

/**
 * Optional store methods that read the usage of many keys in one round trip each: the key list's
 * sparklines and "last used" column. `MemoryKeyStore`, `PostgresKeyStore` and `RedisKeyStore` have
 * them; with a store that lacks them the dashboard asks per key (`getUsage`, `getActivity`).
 *
 * @example
 * const totals = await store.getDailyTotalsOfKeys(['key_a', 'key_b'], '2026-11-01', '2026-11-30');
 */
export interface UsageSummaryStore {
  /**
   * Requests per UTC day, every outcome added up, of the keys in `keyIds` for the days `from` to
   * `to` (inclusive, `YYYY-MM-DD`): one entry per key and day with traffic.
   */
  getDailyTotalsOfKeys(
    keyIds: readonly string[],
    from: string,
    to: string,
  ): Promise<Array<{ keyId: string; day: string; total: number }>>;
  /** The activity of those keys in `keyIds` that have been used. */
  getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]>;
}

/** A key's row in the list: requests per day (oldest first) and its last use. */
export interface KeySummary {
  readonly daily: number[];
  readonly lastUsedAt: string | null;
  readonly lastUsedIp: string | null;
}

/**
 * True when `value` has the methods of a {@link UsageSummaryStore}.
 *
 * @example
 * isUsageSummaryStore(new MemoryKeyStore()) // true
 */
export function isUsageSummaryStore(value: unknown): value is UsageSummaryStore {
  const v = value as Partial<UsageSummaryStore> | null | undefined;
  return !!v && typeof v.getDailyTotalsOfKeys === 'function' && typeof v.getActivityOfKeys === 'function';
}

/** Where the key list reads usage from, resolved once when the dashboard is set up. */
export interface SummarySources {
  /** A store that reads many keys at once, if any store down the chain has the methods. */
  readonly summaries: UsageSummaryStore | undefined;
  /** The manager's store when it keeps usage (read per key), else undefined. */
  readonly usage: UsageStore | undefined;
}

type DayTotal = { keyId: string; day: string; total: number };

async function totalsAndActivity(
  sources: SummarySources,
  ids: readonly string[],
  from: string,
  to: string,
): Promise<{ totals: DayTotal[]; activity: KeyActivity[] }> {
  const batch = sources.summaries;
  if (batch) {
    const [totals, activity] = await Promise.all([
      batch.getDailyTotalsOfKeys(ids, from, to),
      batch.getActivityOfKeys(ids),
    ]);
    return { totals, activity };
  }
  const single = sources.usage;
  if (!single) return { totals: [], activity: [] };
  const rows = await Promise.all(
    ids.map((id) => Promise.all([single.getUsage(id, from, to), single.getActivity(id)] as const)),
  );
  return { totals: dailyTotals(rows.flatMap(([counts]) => counts)), activity: rows.flatMap(([, a]) => (a ? [a] : [])) };
}

/**
 * Sparkline totals and last use of `ids` over `days` (consecutive UTC days, oldest first): two reads
 * for the whole page with a {@link UsageSummaryStore}, two per key without one.
 */
export async function readSummaries(
  sources: SummarySources,
  ids: readonly string[],
  days: readonly string[],
): Promise<Map<string, KeySummary>> {
  const out = new Map<string, KeySummary>();
  if (ids.length === 0 || days.length === 0) return out;
  const index = new Map(days.map((d, i) => [d, i]));
  const { totals, activity } = await totalsAndActivity(sources, ids, days[0] as string, days.at(-1) as string);
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
