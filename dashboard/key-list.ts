import type { ApiKeyRecord, KeyMode, KeyStatus, PublicKey } from 'keygate';
import { toPublicKey } from 'keygate/store-kit';
import type { Dash } from './context.js';

/**
 * An optional store method that reads one page of the key list: newest first (`createdAt`, then
 * `id`, descending), names containing `nameContains` only (case-insensitive) when given, and how
 * many keys match. `MemoryKeyStore` and `PostgresKeyStore` have it; with another store the
 * dashboard lists every key of the account and pages in memory.
 *
 * @example
 * const { records, total } = await store.listKeysPage('acct_1', { offset: 50, limit: 50, nameContains: 'ci' });
 */
export interface KeyListStore {
  listKeysPage(
    accountId: string,
    page: { offset: number; limit: number; nameContains?: string },
  ): Promise<{ records: ApiKeyRecord[]; total: number }>;
}

/** What the key list is filtered by; a part left out filters nothing. */
export interface KeyListFilter {
  /** Found, case-insensitively, in the key's name, hint or id. */
  readonly text?: string;
  readonly status?: KeyStatus;
  readonly mode?: KeyMode;
}

/** A row of the key list. */
export type ListedKey = PublicKey & { readonly rotationDue: boolean };

/** One page of the key list, and where it stands. */
export interface KeyListPage {
  readonly keys: ListedKey[];
  /** Keys that match the filter (all keys of the account without one). */
  readonly total: number;
  /** The page shown (1-based, clamped to the last page). */
  readonly page: number;
  readonly pages: number;
}

const DAY = 86_400_000;

/**
 * True when `value` has the method of a {@link KeyListStore}.
 *
 * @example
 * isKeyListStore(new MemoryKeyStore()) // true
 */
export function isKeyListStore(value: unknown): value is KeyListStore {
  return typeof (value as Partial<KeyListStore> | null | undefined)?.listKeysPage === 'function';
}

// The manager's `rotationDue` for a record read straight from the store (a page of records gets no
// manager view): active and at least the manager's `rotationDays` whole days old.
function rotationDueOf(dash: Dash, key: PublicKey): boolean {
  const ageDays = Math.floor((dash.clock() - Date.parse(key.createdAt)) / DAY);
  return key.status === 'active' && ageDays >= dash.manager.rotationDays;
}

function matches(key: PublicKey, filter: KeyListFilter, needle: string): boolean {
  if (filter.status && key.status !== filter.status) return false;
  if (filter.mode && key.mode !== filter.mode) return false;
  return !needle || [key.name, key.hint, key.id].some((field) => field.toLowerCase().includes(needle));
}

async function everyKey(dash: Dash, accountId: string, filter: KeyListFilter) {
  const all = (await dash.manager.list(accountId)).reverse();
  const needle = filter.text?.toLowerCase() ?? '';
  return all.filter((k) => matches(k, filter, needle));
}

/**
 * Page `page` (1-based) of the account's keys, `size` a page: one read of that page with a
 * {@link KeyListStore}; filtered (text in name, hint or id; status; mode), or without such a
 * store, every key of the account read, filtered and paged here.
 */
export async function readKeyList(
  dash: Dash,
  accountId: string,
  request: { page: number; size: number } & KeyListFilter,
): Promise<KeyListPage> {
  // `listKeysPage` filters by name only: a filtered list is read whole and filtered here.
  const filtered = !!(request.text || request.status || request.mode);
  const store = filtered ? undefined : dash.stores.keyList;
  const wanted = Math.max(1, request.page);
  let records: ListedKey[];
  let total: number;
  if (store) {
    const read = (page: number) =>
      store.listKeysPage(accountId, {
        offset: (page - 1) * request.size,
        limit: request.size,
      });
    let result = await read(wanted);
    const last = Math.max(1, Math.ceil(result.total / request.size));
    if (wanted > last) result = await read(last);
    records = result.records.map((record) => {
      const key = toPublicKey(record);
      return { ...key, rotationDue: rotationDueOf(dash, key) };
    });
    total = result.total;
  } else {
    records = await everyKey(dash, accountId, request);
    total = records.length;
  }
  const pages = Math.max(1, Math.ceil(total / request.size));
  const page = Math.min(wanted, pages);
  const shown = store ? records : records.slice((page - 1) * request.size, page * request.size);
  return { keys: shown, total, page, pages };
}
