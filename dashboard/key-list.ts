import type { KeyMode, KeyStatus, PublicKey } from 'keygate';
import { toPublicKey } from 'keygate/store-kit';
import type { Dash } from './context.js';

/** A row of the key list. */
export type ListedKey = PublicKey & { readonly rotationDue: boolean };

/** One page of the key list, and where it stands. */
export interface KeyListPage {
  readonly keys: ListedKey[];
  /** Keys that match the filters (all keys of the account without any). */
  readonly total: number;
  /** The page shown (1-based, clamped to the last page). */
  readonly page: number;
  readonly pages: number;
}

/** What the list page asks for: a page (1-based) of `size` keys, and the filters the person set. */
export interface KeyListRequest {
  readonly page: number;
  readonly size: number;
  /** Text the key's name, hint or id contains (case-insensitive). */
  readonly search?: string;
  readonly status?: KeyStatus;
  readonly mode?: KeyMode;
}

const DAY = 86_400_000;

// The manager's `rotationDue` for a record read straight from the store (a page of records gets no
// manager view): active and at least the manager's `rotationDays` whole days old.
function rotationDueOf(dash: Dash, key: PublicKey): boolean {
  const ageDays = Math.floor((dash.clock() - Date.parse(key.createdAt)) / DAY);
  return key.status === 'active' && ageDays >= dash.manager.rotationDays;
}

/**
 * Page `request.page` of the account's keys matching the request's filters, newest first: one read
 * of the dashboard's store, and a second when the page asked for is past the last one (then the
 * last page is shown).
 */
export async function readKeyList(dash: Dash, accountId: string, request: KeyListRequest): Promise<KeyListPage> {
  const wanted = Math.max(1, request.page);
  const read = (page: number) =>
    dash.store.listKeysPage(accountId, {
      offset: (page - 1) * request.size,
      limit: request.size,
      search: request.search,
      status: request.status,
      mode: request.mode,
    });
  let result = await read(wanted);
  const pages = Math.max(1, Math.ceil(result.total / request.size));
  if (wanted > pages) result = await read(pages);
  const keys = result.records.map((record) => {
    const key = toPublicKey(record);
    return { ...key, rotationDue: rotationDueOf(dash, key) };
  });
  return { keys, total: result.total, page: Math.min(wanted, pages), pages };
}
