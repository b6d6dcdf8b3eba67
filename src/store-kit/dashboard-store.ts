import type { ApiKeyRecord, KeyMode, KeyStatus } from '../types.js';
import type { KeyActivity } from '../vocabulary/usage-store.js';

/**
 * Which keys of an account one page of the dashboard's key list shows: `limit` keys from `offset`,
 * newest first (`createdAt`, then `id`, descending), only those matching every filter given.
 *
 * @example
 * const query: KeyPageQuery = { offset: 50, limit: 50, search: 'ci', status: 'active', mode: 'live' };
 */
export interface KeyPageQuery {
  /** Keys to skip, 0 or more. */
  readonly offset: number;
  /** Keys to return at most, 1 or more. */
  readonly limit: number;
  /** Only keys whose name, hint or id contains this text, compared case-insensitively. Default: every key. */
  readonly search?: string;
  /** Only keys in this state. Default: every state. */
  readonly status?: KeyStatus;
  /** Only keys of this mode. Default: both modes. */
  readonly mode?: KeyMode;
}

/**
 * One page of an account's keys and how many keys match the query in all.
 *
 * @example
 * const { records, total }: KeyPage = await store.listKeysPage('acct_1', { offset: 0, limit: 50 });
 */
export interface KeyPage {
  readonly records: ApiKeyRecord[];
  /** Keys matching the query's filters, on every page together. */
  readonly total: number;
}

/**
 * Requests of one key on one UTC day, every outcome added up.
 *
 * @example
 * const total: DailyTotal = { keyId: 'key_1', day: '2026-11-01', total: 42 };
 */
export interface DailyTotal {
  readonly keyId: string;
  /** UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  readonly total: number;
}

/**
 * What the developer dashboard (`keygate/dashboard`) keeps and reads beside the keys: pages of the
 * key list, the usage of many keys at once, and its single-use tokens (redeemed sign-in links, ended
 * sessions). It reads the records and usage a key store wrote, so it lives beside that store:
 * `MemoryDashboardStore` (`keygate/dashboard`), `PostgresDashboardStore` (`keygate/postgres`),
 * `RedisDashboardStore` (`keygate/redis`). A new backend proves its own with
 * `describeDashboardStoreContract` from `keygate/testing`.
 *
 * @example
 * const store: DashboardStore = new PostgresDashboardStore({ client: pool });
 * const ui = dashboard({ manager: keys, store, secret });
 */
export interface DashboardStore {
  /** One page of the keys of `accountId` that match `query`, newest first, and how many match in all. */
  listKeysPage(accountId: string, query: KeyPageQuery): Promise<KeyPage>;
  /**
   * Requests per UTC day of the keys in `keyIds` for the days `from` to `to` (inclusive,
   * `YYYY-MM-DD`), every outcome added up: one entry per key and day with traffic, read in one round trip.
   */
  getDailyTotalsOfKeys(keyIds: readonly string[], from: string, to: string): Promise<DailyTotal[]>;
  /** The last allowed use of those keys in `keyIds` that have one (a refused request is no use), read in one round trip. */
  getActivityOfKeys(keyIds: readonly string[]): Promise<KeyActivity[]>;
  /**
   * Records `tokenId` as used until `expiresAt` (ISO-8601). Resolves true when this call recorded it,
   * false when it was recorded before and has not expired: atomic, so of two concurrent calls, from
   * any number of processes, exactly one gets true. A record may be forgotten once `expiresAt` has passed.
   */
  markTokenUsed(tokenId: string, expiresAt: string): Promise<boolean>;
  /** True when `tokenId` is recorded and its `expiresAt` has not passed. */
  isTokenUsed(tokenId: string): Promise<boolean>;
}
