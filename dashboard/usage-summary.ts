import type { KeyActivity, UsageStore } from 'keygate/store-kit';

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

function has<T>(value: unknown, ...methods: string[]): value is T {
  return !!value && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
}

/** The store to read from: the first of `store`, `store.store`, ... (a `CachedKeyStore` wraps one) with the methods. */
function storeWith<T>(store: unknown, ...methods: string[]): T | undefined {
  for (let s = store, depth = 0; s && depth < 4; depth++) {
    if (has<T>(s, ...methods)) return s;
    s = (s as { store?: unknown }).store;
  }
  return undefined;
}

type DayTotal = { keyId: string; day: string; total: number };

async function totalsAndActivity(
  store: unknown,
  ids: readonly string[],
  from: string,
  to: string,
): Promise<{ totals: DayTotal[]; activity: KeyActivity[] }> {
  const batch = storeWith<UsageSummaryStore>(store, 'getDailyTotalsOfKeys', 'getActivityOfKeys');
  if (batch) {
    const [totals, activity] = await Promise.all([
      batch.getDailyTotalsOfKeys(ids, from, to),
      batch.getActivityOfKeys(ids),
    ]);
    return { totals, activity };
  }
  const single = storeWith<UsageStore>(store, 'getUsage', 'getActivity');
  if (!single) return { totals: [], activity: [] };
  const rows = await Promise.all(
    ids.map((id) => Promise.all([single.getUsage(id, from, to), single.getActivity(id)] as const)),
  );
  const totals = rows.flatMap(([counts]) => counts.map((c) => ({ keyId: c.keyId, day: c.day, total: c.count })));
  return { totals, activity: rows.flatMap(([, a]) => (a ? [a] : [])) };
}

/**
 * Sparkline totals and last use of `ids` over `days` (consecutive UTC days, oldest first): two reads
 * for the whole page with a {@link UsageSummaryStore}, two per key without one.
 */
export async function readSummaries(
  store: unknown,
  ids: readonly string[],
  days: readonly string[],
): Promise<Map<string, KeySummary>> {
  const out = new Map<string, KeySummary>();
  if (ids.length === 0 || days.length === 0) return out;
  const index = new Map(days.map((d, i) => [d, i]));
  const { totals, activity } = await totalsAndActivity(store, ids, days[0] as string, days.at(-1) as string);
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
