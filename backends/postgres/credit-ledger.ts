import {
  type CreditBalance,
  type CreditEntry,
  type CreditLedger,
  CreditLedgerUnavailableError,
  type CreditReconciliation,
  type EntriesOptions,
  type HoldOptions,
  type HoldResult,
  KeyStoreUnavailableError,
  type SettleResult,
  type TopUpOptions,
} from 'keygate';
import {
  amountOverflow,
  amountOverHold,
  CAPABILITIES,
  type Capabilities,
  type Capable,
  DEFAULT_LEDGER_TIMEOUT_MS,
  validCreditAccount,
  validEntriesArgs,
  validHoldArgs,
  validHoldId,
  validSettleArgs,
  validTimeoutMs,
  validTopUpArgs,
  withLedgerDeadline,
} from 'keygate/store-kit';
import type { Pool } from 'pg';
import { CREDIT_FUNCTIONS } from './credit-functions.js';
import { type EntryRow, entryOf } from './credit-rows.js';
import { CREDIT_TABLES, type CreditStatements, creditStatements } from './credit-sql.js';
import { type PGliteLike, type Query, type SqlClient, sqlClient, validSchema } from './sql-client.js';

/**
 * Options of {@link PostgresCreditLedger}.
 *
 * @example
 * const options: PostgresCreditLedgerOptions = { client: new pg.Pool({ connectionString }), schema: 'billing', timeoutMs: 500 };
 */
export interface PostgresCreditLedgerOptions {
  /** A `pg` Pool (not a single Client) or a PGlite instance. The caller owns it and ends it. */
  client: Pool | PGliteLike;
  /**
   * Schema of the `keygate_credit_*` tables, created by `migrate()` if missing. Lower-case letters,
   * digits and `_`, at most 40 characters.
   *
   * @default 'public'
   */
  schema?: string;
  /**
   * Milliseconds a call may take before it rejects with `CreditLedgerUnavailableError`. The ledger
   * declares it as its `deadline` capability.
   *
   * @default 1000
   */
  timeoutMs?: number;
}

// Neither the key store's nor the rate limiter's lock class: the three migrations may run at once.
const LOCK_CLASS = 0x6b69;

interface Available {
  available: string | number;
}

interface Credits {
  used: boolean;
  held: string | number;
}

interface Figures {
  entries: string | number;
  available: string | number;
  held: string | number;
  ok: boolean;
}

interface Held {
  r_ok: boolean;
  r_available: string | number;
}

interface Settled {
  r_state: 'settled' | 'closed' | 'unknown' | 'over';
  r_charged: string | number;
  r_available: string | number;
  r_held: string | number;
}

interface Released {
  r_state: 'released' | 'closed' | 'unknown';
  r_available: string | number;
}

/**
 * A credit ledger in PostgreSQL (through a `pg` Pool) or PGlite, exact across every process that
 * shares the database. Every call that changes an account runs in one transaction that first locks the
 * account's balance row (`SELECT ... FOR UPDATE`), so calls on one account run one at a time whichever
 * process sends them; a hold then takes its credits only when the balance covers them, so no
 * interleaving overdraws an account or loses a credit. `hold`, `settle` and `release` are one
 * statement each (one round trip): a PL/pgSQL function that `migrate()` creates runs the whole call
 * in the statement's transaction. Expired holds lapse inside the next call on their account (no
 * background job), and `balance()` counts them as returned from the moment they expire, by the
 * database's clock. Closed holds stay in `keygate_credit_holds` with how they ended (`settled`,
 * `released`, `lapsed`). A call that timed out may still complete in the database: a hold taken that
 * way lapses after its `ttlMs`.
 *
 * @example
 * const ledger = new PostgresCreditLedger({ client: new pg.Pool({ connectionString }) });
 * await ledger.migrate();
 * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' });
 * const held = await ledger.hold('acct_1', 3, { keyId: key.id });
 * if (held.ok) await ledger.settle(held.holdId);
 */
export class PostgresCreditLedger implements CreditLedger, Capable {
  /** Its `deadline`: each call settles within `timeoutMs`. */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly schema: string;
  /** Milliseconds a call may take before it rejects. */
  readonly timeoutMs: number;
  private readonly sql: SqlClient;
  private readonly statements: CreditStatements;

  constructor(options: PostgresCreditLedgerOptions) {
    this.sql = sqlClient(options?.client);
    const schema = validSchema(options.schema ?? 'public');
    const timeoutMs = validTimeoutMs(options.timeoutMs, DEFAULT_LEDGER_TIMEOUT_MS);
    this.schema = schema;
    this.timeoutMs = timeoutMs;
    this[CAPABILITIES] = { deadline: this };
    // The schema is validated above and quoted, never taken from request data; values always go as parameters.
    this.statements = creditStatements(`"${schema}"`);
  }

  /**
   * Creates the schema (unless `public`) and the ledger's tables and indexes if missing, and creates
   * or replaces its functions (`hold`, `settle` and `release` call them: a schema made by an earlier
   * version gains them here). Idempotent; concurrent callers are serialised by an advisory lock.
   *
   * @example
   * await ledger.migrate(); // at start-up, before the first call
   */
  async migrate(): Promise<void> {
    await this.sql.transaction(async (q) => {
      await q('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, this.schema]);
      if (this.schema !== 'public') await q(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      for (const statement of [...CREDIT_TABLES, ...CREDIT_FUNCTIONS]) {
        await q(statement.replaceAll('S.', `"${this.schema}".`));
      }
    });
  }

  /**
   * Adds `amount` credits to the account and writes a `top_up` entry. With a `reference` already used
   * for this account, changes nothing and returns the balance.
   *
   * @example
   * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' }); // { balance: 500 }, and again: { balance: 500 }
   */
  async topUp(accountId: string, amount: number, options?: TopUpOptions): Promise<CreditBalance> {
    const args = validTopUpArgs(accountId, amount, options);
    return this.call(() =>
      this.sql.transaction(async (q) => {
        await q(this.statements.open, [args.accountId]);
        const before = (await this.lockAndSweep(q, args.accountId)) ?? 0;
        const { rows } = await q<Credits>(this.statements.credits, [args.accountId, args.reference ?? null]);
        if (rows[0]?.used) return { balance: before };
        if (args.amount > Number.MAX_SAFE_INTEGER - (before + Number(rows[0]?.held ?? 0))) {
          throw amountOverflow(args.amount);
        }
        const credited = await q<Available>(this.statements.topUp, [
          args.accountId,
          args.amount,
          args.reference ?? null,
        ]);
        return { balance: Number(credited.rows[0]?.available) };
      }),
    );
  }

  /**
   * The account's available balance: top-ups minus charges minus open holds; 0 for an unknown account.
   *
   * @example
   * await ledger.balance('acct_1'); // 497
   */
  async balance(accountId: string): Promise<number> {
    const account = validCreditAccount(accountId);
    return this.call(async () => {
      const { rows } = await this.sql.query<Available>(this.statements.balance, [account]);
      return rows[0] ? Number(rows[0].available) : 0;
    });
  }

  /**
   * Takes `amount` credits from the available balance for `ttlMs`, or nothing when the balance does
   * not cover it (`ok: false`).
   *
   * @example
   * const held = await ledger.hold('acct_1', 3, { keyId: key.id, ttlMs: 30_000 }); // { ok: true, holdId, balance: 497 }
   */
  async hold(accountId: string, amount: number, options?: HoldOptions): Promise<HoldResult> {
    const { accountId: account, amount: credits, keyId, ttlMs } = validHoldArgs(accountId, amount, options);
    return this.call(async (): Promise<HoldResult> => {
      const holdId = newHoldId();
      const { rows } = await this.sql.query<Held>(this.statements.hold, [
        account,
        credits,
        holdId,
        keyId ?? null,
        ttlMs,
      ]);
      const row = rows[0];
      if (!row) throw new CreditLedgerUnavailableError('PostgresCreditLedger: the hold function returned no row');
      const balance = Number(row.r_available);
      return row.r_ok === true ? { ok: true, holdId, balance } : { ok: false, balance };
    });
  }

  /**
   * Charges `amount` of the hold (0..held, default all) as one `charge` entry (none for 0) and returns
   * the rest; more than the open hold is an `InvalidInputError` naming `amount`. A hold already
   * settled, released or lapsed, or an unknown id (balance 0), changes nothing: `charged` is 0.
   *
   * @example
   * await ledger.settle(held.holdId);    // { charged: 3, balance: 497 }
   * await ledger.settle(held.holdId);    // { charged: 0, balance: 497 }
   */
  async settle(holdId: string, amount?: number): Promise<SettleResult> {
    const { holdId: id, amount: charge } = validSettleArgs(holdId, amount);
    return this.call(async (): Promise<SettleResult> => {
      const { rows } = await this.sql.query<Settled>(this.statements.settle, [id, charge ?? null]);
      const row = rows[0];
      if (!row) throw new CreditLedgerUnavailableError('PostgresCreditLedger: the settle function returned no row');
      // More than the open hold: the function changed nothing of it.
      if (row.r_state === 'over') throw amountOverHold(charge ?? Number(row.r_held), Number(row.r_held));
      return { charged: Number(row.r_charged), balance: Number(row.r_available) };
    });
  }

  /**
   * Returns the whole hold to the balance, writing no entry. A hold already settled, released or
   * lapsed, or an unknown id (balance 0), changes nothing.
   *
   * @example
   * await ledger.release(held.holdId); // { balance: 500 }
   */
  async release(holdId: string): Promise<CreditBalance> {
    const id = validHoldId(holdId);
    return this.call(async (): Promise<CreditBalance> => {
      const { rows } = await this.sql.query<Released>(this.statements.release, [id]);
      return { balance: Number(rows[0]?.r_available ?? 0) };
    });
  }

  /**
   * The account's entries, newest first, at most `limit` of them.
   *
   * @example
   * await ledger.entries('acct_1', { limit: 2 }); // [{ kind: 'charge', amount: -3, balance: 497, ... }, { kind: 'top_up', ... }]
   */
  async entries(accountId: string, options?: EntriesOptions): Promise<CreditEntry[]> {
    const { accountId: account, limit } = validEntriesArgs(accountId, options);
    return this.call(async () => {
      const { rows } = await this.sql.query<EntryRow>(this.statements.entries, [account, limit]);
      return rows.map(entryOf);
    });
  }

  /**
   * Sums every entry of the account in the database (one aggregate over its index) and reads its
   * balance and open holds in the same statement, so the figures are of one moment; takes no lock.
   *
   * @example
   * await ledger.reconcile('acct_1'); // { accountId: 'acct_1', entries: 500, balance: 497, held: 3, ok: true }
   */
  async reconcile(accountId: string): Promise<CreditReconciliation> {
    const account = validCreditAccount(accountId);
    return this.call(async () => {
      const { rows } = await this.sql.query<Figures>(this.statements.reconcile, [account]);
      const row = rows[0];
      if (!row) throw new CreditLedgerUnavailableError('PostgresCreditLedger: the reconcile statement returned no row');
      const figures = { entries: Number(row.entries), balance: Number(row.available), held: Number(row.held) };
      return { accountId: account, ...figures, ok: row.ok === true };
    });
  }

  /** Locks the account's row, then lapses its expired holds: the balance after, or undefined for no account. */
  private async lockAndSweep(q: Query, account: string): Promise<number | undefined> {
    const { rows } = await q<Available>(this.statements.lock, [account]);
    if (!rows[0]) return undefined;
    const swept = await q<Available>(this.statements.sweep, [account]);
    return Number((swept.rows[0] ?? rows[0]).available);
  }

  /**
   * Runs `work` under the deadline. The SQL client reports a database failure as the key store's
   * error; the ledger reports it as its own, with the database's error as `cause`.
   */
  private call<T>(work: () => Promise<T>): Promise<T> {
    return withLedgerDeadline('PostgresCreditLedger', this.timeoutMs, () =>
      work().catch((err: unknown) => {
        if (!(err instanceof KeyStoreUnavailableError)) throw err;
        throw new CreditLedgerUnavailableError(
          "PostgresCreditLedger failed; the database's error is the cause",
          err.cause,
        );
      }),
    );
  }
}

function newHoldId(): string {
  return `hold_${crypto.randomUUID().replaceAll('-', '')}`;
}
