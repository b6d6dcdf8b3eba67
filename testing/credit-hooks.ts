import type { CreditLedger } from 'keygate';

/**
 * A ledger that creates its own tables (`migrate()`), as the SQL ledgers do.
 *
 * @example
 * const ledger: MigratableCreditLedger = new SqliteCreditLedger({ database });
 */
export type MigratableCreditLedger = CreditLedger & { migrate(): Promise<unknown> };

/**
 * What a fixture of {@link describeCreditLedgerContract} may do around the ledger, so that the suite
 * checks what a backend stores and how it fails, not only what it answers. Each hook is optional; the
 * suite adds the cases of the hooks named in the options' `hooks`, and every fixture must then have them.
 *
 * @example
 * const hooks: CreditLedgerHooks = { writeAround: (account, amount) => insertEntryByHand(account, amount) };
 */
export interface CreditLedgerHooks {
  /** Writes a `top_up` entry of `amount` credits for `accountId` straight into the stored entries, around the ledger, as a hand-run statement would. */
  writeAround?(accountId: string, amount: number): Promise<void>;
  /** The stored state of a hold (`open`, `lapsed`, ...), read around the ledger; `undefined` when none is stored. */
  holdState?(holdId: string): Promise<string | undefined>;
  /** An account's stored figures, read around the ledger: the sum of its entries, its stored available balance and the sum of its open holds. */
  storedFigures?(accountId: string): Promise<{ entries: number; available: number; open: number }>;
  /**
   * A ledger with `timeoutMs` (in milliseconds) over a backend that never answers (connections and
   * commands hang); `unstick` later fails what the ledger waited on, as a connection reset would.
   */
  stalled?(timeoutMs: number): { ledger: CreditLedger; unstick(err: Error): void };
  /** A ledger that answered once, whose client has since been closed or ended. */
  ended?(): Promise<CreditLedger>;
  /**
   * A ledger over the same data that prunes by itself the holds closed more than `pruneHoldsAfterMs`
   * milliseconds ago (its `pruneHoldsAfterMs` option). Its case also needs `holdState`.
   */
  pruning?(pruneHoldsAfterMs: number): CreditLedger;
  /** `count` ledgers over one fresh database nobody has migrated, as that many processes would open it; `drop` removes it. */
  unmigrated?(count: number): Promise<{ ledgers: MigratableCreditLedger[]; drop?(): Promise<void> }>;
}

/**
 * The name of one of the {@link CreditLedgerHooks}, as the options' `hooks` list them.
 *
 * @example
 * const hooks: CreditLedgerHook[] = ['writeAround', 'stalled'];
 */
export type CreditLedgerHook = keyof CreditLedgerHooks;
