import { CreditLedgerUnavailableError, type HoldResult } from 'keygate';
import { amountOverflow, amountOverHold, type HoldArgs, type TopUpArgs } from 'keygate/store-kit';
import type { Pool } from 'pg';
import { type CreditEntryRow, newHoldId, SqlCreditLedger } from '../sql/credit-ledger-shell.js';
import { CREDIT_FUNCTIONS } from './credit-functions.js';
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
  /**
   * Milliseconds a closed hold's row stays in `keygate_credit_holds` before the ledger deletes it by
   * itself (`prune`): after a hold it took, in the background, at most once an hour (or per this
   * many milliseconds, if fewer). `null` or `0`: never; call `prune()` yourself. Entries are never deleted.
   *
   * @default 86_400_000 (one day)
   */
  pruneHoldsAfterMs?: number | null;
}

// Every member of {@link PostgresCreditLedgerOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({
  client: true,
  schema: true,
  timeoutMs: true,
  pruneHoldsAfterMs: true,
} satisfies Record<keyof PostgresCreditLedgerOptions, true>);

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

interface Pruned {
  deleted: string | number;
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
 * `released`, `lapsed`) for `pruneHoldsAfterMs` (a day), then the ledger deletes them (`prune`); entries
 * stay for good. A call that timed out may still complete in the database: a hold taken that way
 * lapses after its `ttlMs`.
 *
 * @example
 * const ledger = new PostgresCreditLedger({ client: new pg.Pool({ connectionString }) });
 * await ledger.migrate();
 * await ledger.topUp('acct_1', 500, { reference: 'pi_3Nf…' });
 * const held = await ledger.hold('acct_1', 3, { keyId: key.id });
 * if (held.ok) await ledger.settle(held.holdId);
 */
export class PostgresCreditLedger extends SqlCreditLedger {
  readonly schema: string;
  /** Milliseconds a closed hold is kept before the ledger prunes it by itself; `null`: never. */
  readonly pruneHoldsAfterMs: number | null;
  private readonly sql: SqlClient;
  private readonly statements: CreditStatements;

  constructor(options: PostgresCreditLedgerOptions) {
    const sql = sqlClient(options?.client);
    const schema = validSchema(options.schema ?? 'public');
    super('PostgresCreditLedger', options.timeoutMs, { options, names: OPTION_NAMES });
    this.sql = sql;
    this.schema = schema;
    // The schema is validated above and quoted, never taken from request data; values always go as parameters.
    this.statements = creditStatements(`"${schema}"`);
    this.pruneHoldsAfterMs = this.pruneHoldsAfter(options.pruneHoldsAfterMs);
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

  protected applyTopUp(args: TopUpArgs) {
    return this.sql.transaction(async (q) => {
      await q(this.statements.open, [args.accountId]);
      const before = (await this.lockAndSweep(q, args.accountId)) ?? 0;
      const { rows } = await q<Credits>(this.statements.credits, [args.accountId, args.reference ?? null]);
      if (rows[0]?.used) return { balance: before };
      if (args.amount > Number.MAX_SAFE_INTEGER - (before + Number(rows[0]?.held ?? 0))) {
        throw amountOverflow(args.amount);
      }
      const credited = await q<Available>(this.statements.topUp, [args.accountId, args.amount, args.reference ?? null]);
      return { balance: Number(credited.rows[0]?.available) };
    });
  }

  protected async readBalance(account: string) {
    const { rows } = await this.sql.query<Available>(this.statements.balance, [account]);
    return rows[0] ? Number(rows[0].available) : 0;
  }

  // One statement: the hold function runs the whole call in the statement's transaction.
  protected async placeHold(args: HoldArgs): Promise<HoldResult> {
    const holdId = newHoldId();
    const params = [args.accountId, args.amount, holdId, args.keyId ?? null, args.ttlMs];
    const { rows } = await this.sql.query<Held>(this.statements.hold, params);
    const row = rows[0];
    if (!row) throw new CreditLedgerUnavailableError('PostgresCreditLedger: the hold function returned no row');
    const balance = Number(row.r_available);
    this.pruneSoon();
    return row.r_ok === true ? { ok: true, holdId, balance } : { ok: false, balance };
  }

  protected async settleHold(holdId: string, amount: number | undefined) {
    const { rows } = await this.sql.query<Settled>(this.statements.settle, [holdId, amount ?? null]);
    const row = rows[0];
    if (!row) throw new CreditLedgerUnavailableError('PostgresCreditLedger: the settle function returned no row');
    // More than the open hold: the function changed nothing of it.
    if (row.r_state === 'over') throw amountOverHold(amount ?? Number(row.r_held), Number(row.r_held));
    return { charged: Number(row.r_charged), balance: Number(row.r_available) };
  }

  protected async releaseHold(holdId: string) {
    const { rows } = await this.sql.query<Released>(this.statements.release, [holdId]);
    return { balance: Number(rows[0]?.r_available ?? 0) };
  }

  protected async readEntries(account: string, limit: number) {
    const { rows } = await this.sql.query<CreditEntryRow>(this.statements.entries, [account, limit]);
    return rows.map((row) => this.entryOfRow(row, isoOf));
  }

  // One aggregate over the account's index, with its balance and open holds in the same statement,
  // so the figures are of one moment; takes no lock.
  protected async readFigures(account: string) {
    const { rows } = await this.sql.query<Figures>(this.statements.reconcile, [account]);
    const row = rows[0];
    if (!row) throw new CreditLedgerUnavailableError('PostgresCreditLedger: the reconcile statement returned no row');
    const figures = { entries: Number(row.entries), balance: Number(row.available), held: Number(row.held) };
    return { accountId: account, ...figures, ok: row.ok === true };
  }

  // Two statements, each its own transaction: idle accounts' expired holds lapse (at their expiry),
  // then closed holds go; a lapse of this batch is deleted by it when it is old enough.
  protected override async pruneHolds(olderThanMs: number, limit: number) {
    await this.sql.query(this.statements.lapseIdle, [olderThanMs, limit]);
    const { rows } = await this.sql.query<Pruned>(this.statements.prune, [olderThanMs, limit]);
    return Number(rows[0]?.deleted ?? 0);
  }

  /** Locks the account's row, then lapses its expired holds: the balance after, or undefined for no account. */
  private async lockAndSweep(q: Query, account: string): Promise<number | undefined> {
    const { rows } = await q<Available>(this.statements.lock, [account]);
    if (!rows[0]) return undefined;
    const swept = await q<Available>(this.statements.sweep, [account]);
    return Number((swept.rows[0] ?? rows[0]).available);
  }
}

/** An instant as `pg` (a `Date`) or PGlite returns a `timestamptz` column, as ISO 8601. */
function isoOf(time: Date | string): string {
  return (time instanceof Date ? time : new Date(time)).toISOString();
}
