import { type CreditEntry, CreditLedgerUnavailableError, KeyStoreUnavailableError } from 'keygate';
import { BackendCreditLedger } from 'keygate/store-kit';

/**
 * An entry's row, as every SQL dialect's driver returns it: bigint columns as text or a number, the
 * time as a `Date` or text.
 */
export interface CreditEntryRow {
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
 * The part of a credit ledger that every SQL dialect writes the same way: entry rows read back as
 * entries, hold ids made, and the driver's failures reported as the ledger's own.
 */
export abstract class SqlCreditLedger extends BackendCreditLedger {
  protected override call<T>(work: () => T | Promise<T>): Promise<T> {
    return super.call(() => this.guard(work));
  }

  /**
   * `work`'s answer, or its failure as a keygate error. The SQL clients report a database failure as
   * the key store's error; the ledger reports it as its own, with the database's error as `cause`.
   */
  protected guard<T>(work: () => T | Promise<T>): T | Promise<T> {
    return new Promise<T>((resolve) => resolve(work())).catch((err: unknown) => {
      if (!(err instanceof KeyStoreUnavailableError)) throw err;
      throw new CreditLedgerUnavailableError(`${this.ledgerName} failed; the database's error is the cause`, err.cause);
    });
  }

  /**
   * The entry a row holds; its id is `ce_` and the row's sequence number, which orders an account's
   * entries (each was written under the account's lock). `isoOf` reads the dialect's time.
   *
   * @internal
   */
  protected entryOfRow(row: CreditEntryRow, isoOf: (time: Date | string) => string): CreditEntry {
    return this.entry({
      id: `ce_${row.seq}`,
      accountId: row.account_id,
      kind: row.kind,
      amount: row.amount,
      balance: row.balance,
      keyId: row.key_id,
      reference: row.reference,
      createdAt: isoOf(row.created_at),
    });
  }
}

/**
 * A new hold's id: `hold_` and 32 hex digits.
 *
 * @example
 * newHoldId(); // 'hold_3f2c…'
 */
export function newHoldId(): string {
  return `hold_${crypto.randomUUID().replaceAll('-', '')}`;
}
