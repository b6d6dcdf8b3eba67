import type { RateLimitDecision } from 'keygate';
import { BackendRateLimiter, type ConsumeArgs, type RateLimitLease, type TakeArgs } from 'keygate/store-kit';
import type { Pool } from 'mysql2/promise';
import { withMigrationLock } from './migrate.js';
import { rateLimitTables } from './migrations.js';
import { type SqlClient, sqlClient, validTablePrefix } from './sql-client.js';

/**
 * Options of {@link MysqlRateLimiter}.
 *
 * @example
 * const options: MysqlRateLimiterOptions = { client: pool, tablePrefix: 'keygate_', timeoutMs: 100 };
 */
export interface MysqlRateLimiterOptions {
  /** A `mysql2/promise` Pool (not a single connection). The caller owns it and ends it. */
  client: Pool;
  /** Start of the table's name, `<prefix>rate_limits`. @default 'keygate_' */
  tablePrefix?: string;
  /**
   * Milliseconds to wait for the database before `consume` rejects with `RateLimiterUnavailableError`.
   * The limiter declares it as its `deadline` capability, so `authenticate` arms no second timer.
   *
   * @default 250
   */
  timeoutMs?: number;
}

// Every member of {@link MysqlRateLimiterOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, tablePrefix: true, timeoutMs: true } satisfies Record<
  keyof MysqlRateLimiterOptions,
  true
>);

interface LeaseRow {
  used: string | number;
  reset_us: string | number;
  end_us: string | number;
}

interface WindowRow {
  used: string | number;
  allowed: number | string;
  reset_us: string | number;
}

/**
 * A rate limiter in MySQL 8 or MariaDB, exact across every process that shares the database: one row
 * per key (`<prefix>rate_limits`), changed by one `INSERT ... ON DUPLICATE KEY UPDATE` and read back
 * in the same transaction. The upsert's row lock, held to COMMIT, serialises concurrent requests for
 * a key, and each sees the count the previous one left, so none over-counts. Windows are timed by the
 * database's clock (`UTC_TIMESTAMP(3)`). A row stays after its window ends and is reused by the key's
 * next window; `prune()` deletes ended ones. A consume that timed out may still have been counted.
 *
 * @example
 * const limiter = new MysqlRateLimiter({ client: pool });
 * await limiter.migrate();
 * const { allowed, remaining } = await limiter.consume(key.id, { limit: 100, windowMs: 60_000 }, 1);
 */
export class MysqlRateLimiter extends BackendRateLimiter {
  readonly tablePrefix: string;
  private readonly sql: SqlClient;
  private readonly table: string;
  private readonly upsert: string;

  constructor(options: MysqlRateLimiterOptions) {
    const sql = sqlClient(options?.client);
    const tablePrefix = validTablePrefix(options.tablePrefix ?? 'keygate_');
    super('MysqlRateLimiter', options.timeoutMs, 250, { options, names: OPTION_NAMES });
    this.sql = sql;
    this.tablePrefix = tablePrefix;
    this.table = `${tablePrefix}rate_limits`;
    this.upsert = upsertStatement(this.table);
  }

  /**
   * Creates the table if missing. Idempotent; concurrent callers are serialised by a named lock.
   *
   * @example
   * await limiter.migrate(); // at start-up, before the first request
   */
  async migrate(): Promise<void> {
    await withMigrationLock(this.sql, this.tablePrefix, 'rate_limits', async (q) => {
      for (const statement of rateLimitTables(this.tablePrefix)) await q(statement);
    });
  }

  /**
   * Deletes the rows of windows that have ended. Optional housekeeping: a key's row is reused by its
   * next window anyway, so the table never holds more than one row per key. Returns how many went.
   *
   * @example
   * setInterval(() => limiter.prune().catch(() => {}), 3_600_000);
   */
  async prune(): Promise<number> {
    const { affectedRows } = await this.sql.query(`DELETE FROM ${this.table} WHERE window_end <= UTC_TIMESTAMP(3)`);
    return affectedRows;
  }

  // The upsert, then the row read back in the same transaction.
  protected async count(args: ConsumeArgs): Promise<RateLimitDecision> {
    const windowUs = Math.round(args.windowMs * 1000);
    const fits = args.cost <= args.limit;
    const first = fits ? args.cost : 0;
    const { cost, limit } = args;
    const row = await this.sql.transaction(async (q) => {
      await q(this.upsert, [args.keyId, windowUs, first, fits, fits, cost, limit, first, cost, limit, cost, windowUs]);
      const { rows } = await q<WindowRow>(
        `SELECT used, allowed, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), window_end) AS reset_us
          FROM ${this.table} WHERE key_id = ?`,
        [args.keyId],
      );
      return rows[0];
    });
    if (!row) throw new Error('the rate-limit row was not there after its upsert');
    return this.decision(limit, Number(row.used), Number(row.allowed) === 1, Math.ceil(Number(row.reset_us) / 1000));
  }

  // One transaction: opens the window if it ended (locking the row), reads it, counts the grant.
  protected grant(args: TakeArgs): Promise<RateLimitLease> {
    const windowUs = Math.round(args.windowMs * 1000);
    const ended = 'window_end <= UTC_TIMESTAMP(3)';
    return this.sql.transaction(async (q) => {
      await q(
        `INSERT INTO ${this.table} (key_id, window_end, used, allowed)
          VALUES (?, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, 0, TRUE)
          ON DUPLICATE KEY UPDATE used = IF(${ended}, 0, used),
            window_end = IF(${ended}, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, window_end)`,
        [args.keyId, windowUs, windowUs],
      );
      const { rows } = await q<LeaseRow>(
        `SELECT used, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), window_end) AS reset_us,
            TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', window_end) AS end_us
          FROM ${this.table} WHERE key_id = ?`,
        [args.keyId],
      );
      const row = rows[0];
      if (!row) throw new Error('the rate-limit row was not there after its upsert');
      const used = Number(row.used);
      const granted = this.grantFor(args, used);
      if (granted > 0) {
        await q(`UPDATE ${this.table} SET used = used + ?, allowed = TRUE WHERE key_id = ?`, [granted, args.keyId]);
      }
      const resetMs = Math.ceil(Number(row.reset_us) / 1000);
      return this.lease(args.limit, granted, used + granted, resetMs, Number(row.end_us) / 1000);
    });
  }

  protected uncount(args: ConsumeArgs, window: number): Promise<unknown> {
    return this.sql.query(
      `UPDATE ${this.table} SET used = IF(used > ?, used - ?, 0)
        WHERE key_id = ? AND window_end > UTC_TIMESTAMP(3)
          AND ABS(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', window_end) / 1000 - ?) * 2 < ?`,
      [args.cost, args.cost, args.keyId, window, args.windowMs],
    );
  }
}

/**
 * The upsert of one request. Parameters: key id, window (µs), first window's used and allowed, then
 * for an existing row: allowed-if-ended, cost, limit; used-if-ended, cost, limit, cost; window (µs).
 * MySQL assigns left to right, each assignment seeing the ones before it (MariaDB too, unless
 * SIMULTANEOUS_ASSIGNMENT): `allowed` reads `used` before `used` changes, and `window_end` goes last,
 * so every condition reads the stored window. Either order of evaluation gives the same row.
 * UTC_TIMESTAMP(3) is the statement's start, one value throughout.
 */
function upsertStatement(table: string): string {
  const ended = 'window_end <= UTC_TIMESTAMP(3)';
  return `INSERT INTO ${table} (key_id, window_end, used, allowed)
    VALUES (?, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, ?, ?)
    ON DUPLICATE KEY UPDATE
      allowed = IF(${ended}, ?, used + ? <= ?),
      used = IF(${ended}, ?, IF(used + ? <= ?, used + ?, used)),
      window_end = IF(${ended}, UTC_TIMESTAMP(3) + INTERVAL ? MICROSECOND, window_end)`;
}
