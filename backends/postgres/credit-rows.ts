import type { CreditEntry } from 'keygate';

/** An entry's row as `pg` or PGlite returns it: bigint columns as text (or a number), timestamps as Date. */
export interface EntryRow {
  seq: string | number;
  account_id: string;
  kind: CreditEntry['kind'];
  amount: string | number;
  balance: string | number;
  key_id: string | null;
  reference: string | null;
  created_at: Date | string;
}

/**
 * The entry a row holds; its id is `ce_` and the row's sequence number, which orders an account's
 * entries (each was written under the account's lock).
 *
 * @example
 * entryOf({ seq: '7', account_id: 'acct_1', kind: 'charge', amount: '-3', balance: '497', key_id: null, reference: null, created_at: new Date() })
 * // { id: 'ce_7', accountId: 'acct_1', kind: 'charge', amount: -3, balance: 497, createdAt: '2026-…Z' }
 */
export function entryOf(row: EntryRow): CreditEntry {
  const entry: CreditEntry = {
    id: `ce_${row.seq}`,
    accountId: row.account_id,
    kind: row.kind,
    amount: Number(row.amount),
    balance: Number(row.balance),
    createdAt: (row.created_at instanceof Date ? row.created_at : new Date(row.created_at)).toISOString(),
  };
  if (row.key_id !== null) entry.keyId = row.key_id;
  if (row.reference !== null) entry.reference = row.reference;
  return entry;
}
