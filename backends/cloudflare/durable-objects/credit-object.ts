import type { EntriesOptions, HoldOptions, TopUpOptions } from 'keygate';
import { CREDIT_TABLES, SqliteCreditLedger } from 'keygate/sqlite';
import { checkOptionNames } from 'keygate/store-kit';
import { answerCall } from './protocol.js';
import { openTables } from './storage-driver.js';
import type { DurableObjectStateLike } from './workers-types.js';

/**
 * Options of {@link KeygateCreditObject}, which a subclass passes (the runtime constructs the class
 * with `(ctx, env)` only).
 *
 * @example
 * export class Credits extends KeygateCreditObject {
 *   constructor(ctx: DurableObjectStateLike, env: unknown) { super(ctx, env, { pruneHoldsAfterMs: 7 * 86_400_000 }); }
 * }
 */
export interface KeygateCreditObjectOptions {
  /**
   * Milliseconds a closed hold stays in the object's storage before the object deletes it by itself
   * (after a hold it took, at most once an hour, or per this many milliseconds if fewer). `null` or
   * `0`: never. Entries are never deleted.
   *
   * @default 86_400_000 (one day)
   */
  pruneHoldsAfterMs?: number | null;
}

/**
 * The Durable Object that keeps one account's credits: a Worker's `DurableObjectCreditLedger` reaches
 * the object named by the account id, so every hold, settle and top-up of an account is applied by
 * one object, one at a time (a `SqliteCreditLedger` over the object's own SQLite storage, each call one
 * `transactionSync`). Exact by construction: no interleaving overdraws the account or loses a credit.
 * The object deletes its own closed holds after `pruneHoldsAfterMs` (a day; see
 * {@link KeygateCreditObjectOptions}), since `DurableObjectCreditLedger.prune()` reaches no object but
 * by its account.
 * Export the class from your Worker's entry and declare it in `wrangler.toml` as a SQLite-backed class:
 *
 * ```
 * [[durable_objects.bindings]]
 * name = "KEYGATE_CREDITS"
 * class_name = "KeygateCreditObject"
 *
 * [[migrations]]
 * tag = "keygate-v1"
 * new_sqlite_classes = ["KeygateRateLimitObject", "KeygateCreditObject"]
 * ```
 *
 * @example
 * export { KeygateCreditObject } from 'keygate/cloudflare';
 * // in a handler: new DurableObjectCreditLedger({ namespace: env.KEYGATE_CREDITS })
 */
export class KeygateCreditObject {
  private readonly ctx: DurableObjectStateLike;
  private readonly options: KeygateCreditObjectOptions;
  private ledger: SqliteCreditLedger | undefined;

  constructor(ctx: DurableObjectStateLike, _env?: unknown, options: KeygateCreditObjectOptions = {}) {
    checkOptionNames(options, ['pruneHoldsAfterMs'], 'KeygateCreditObject');
    this.ctx = ctx;
    this.options = options;
  }

  /**
   * Answers the client's calls: `POST /<method>` with `{ args }`, for topUp, balance, hold, settle,
   * release, entries and reconcile.
   *
   * @example
   * await stub.fetch('https://keygate.do/balance', { method: 'POST', body: JSON.stringify({ args: ['acct_1'] }) });
   */
  fetch(request: Request): Promise<Response> {
    return answerCall(request, {
      topUp: (accountId: string, amount: number, options?: TopUpOptions) =>
        this.open().topUp(accountId, amount, options ?? undefined),
      balance: (accountId: string) => this.open().balance(accountId),
      hold: (accountId: string, amount: number, options?: HoldOptions) =>
        this.open().hold(accountId, amount, options ?? undefined),
      // JSON carries an absent amount as null.
      settle: (holdId: string, amount?: number | null) => this.open().settle(holdId, amount ?? undefined),
      release: (holdId: string) => this.open().release(holdId),
      entries: (accountId: string, options?: EntriesOptions) => this.open().entries(accountId, options ?? undefined),
      reconcile: (accountId: string) => this.open().reconcile(accountId),
    });
  }

  private open(): SqliteCreditLedger {
    this.ledger ??= openTables(
      this.ctx,
      CREDIT_TABLES,
      (database) => new SqliteCreditLedger({ database, pruneHoldsAfterMs: this.options.pruneHoldsAfterMs }),
    );
    return this.ledger;
  }
}
