import type { ApiKeyRecord } from '../types.js';
import type { KeyPage, KeyPageQuery } from './dashboard-store.js';

/**
 * True when `record` matches the filters of `query`: its name, hint or id contains `search`
 * (case-insensitive), and it has the `status` and `mode` asked for. A filter left out matches every key.
 *
 * @example
 * matchesKeyQuery(record, { offset: 0, limit: 50, search: 'CI', mode: 'live' }) // a live key named "ci-deploy": true
 */
export function matchesKeyQuery(record: ApiKeyRecord, query: KeyPageQuery): boolean {
  if (query.status !== undefined && record.status !== query.status) return false;
  if (query.mode !== undefined && record.mode !== query.mode) return false;
  const needle = query.search?.toLowerCase();
  if (!needle) return true;
  return [record.name, record.hint, record.id].some((text) => text.toLowerCase().includes(needle));
}

/**
 * The page of `records` that `query` asks for: those matching its filters (text in the name, hint or id; status; mode),
 * newest first (`createdAt`, then `id`, descending), `limit` from `offset`, and how many match. For a
 * `DashboardStore` that reads every key of the account and pages them itself.
 *
 * @example
 * pageOfKeys(await store.listByAccount('acct_1'), { offset: 0, limit: 50, search: 'ci' }) // { records: [...], total: 3 }
 */
export function pageOfKeys(records: readonly ApiKeyRecord[], query: KeyPageQuery): KeyPage {
  const matching = records
    .filter((record) => matchesKeyQuery(record, query))
    .sort((a, b) => (a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1));
  return { records: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
}
