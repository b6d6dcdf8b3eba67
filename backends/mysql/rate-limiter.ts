import type { RateLimit, RateLimitDecision, RateLimiter } from 'keygate';
import {
  CAPABILITIES,
  type Capabilities,
  type Capable,
  grantOf,
  type LeasableRateLimiter,
  type RateLimitLease,
  type TakeRequest,
  validConsumeArgs,
  validGiveBackArgs,
  validTakeArgs,
  validTimeoutMs,
  withLimiterDeadline,
} from 'keygate/store-kit';
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
export class MysqlRateLimiter implements RateLimiter, LeasableRateLimiter, Capable {
  /** Its `deadline` (each call settles within `timeoutMs`) and `leases` (`take`, `giveBack`). */
  declare readonly [CAPABILITIES]: Capabilities;
  readonly tablePrefix: string;
  /** Milliseconds a `consume` may take before it rejects. */
  readonly timeoutMs: number;
  private readonly sql: SqlClient;
  private readonly table: string;
  private readonly upsert: string;

  constructor(options: MysqlRateLimiterOptions) {
    this.sql = sqlClient(options?.client);
    this.tablePrefix = validTablePrefix(options.tablePrefix ?? 'keygate_');
    this.timeoutMs = validTimeoutMs(options.timeoutMs, 250);
    this[CAPABILITIES] = { deadline: this, leases: this };
    this.table = `${this.tablePrefix}rate_limits`;
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
   * Counts `cost` units against `keyId`. Rejects with `InvalidInputError` for bad arguments and with
   * `RateLimiterUnavailableError` when the database fails or does not answer within `timeoutMs`.
   *
   * @example
   * await limiter.consume('key_1', { limit: 10, windowMs: 1000 }, 1); // { allowed: true, limit: 10, remaining: 9, resetMs: 1000 }
   */
  async consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision> {
    const args = validConsumeArgs(keyId, limit, cost);
    const windowUs = Math.round(args.windowMs * 1000);
    const fits = args.cost <= args.limit;
    const first = fits ? args.cost : 0;
    return withLimiterDeadline('MysqlRateLimiter', this.timeoutMs, async () => {
      const row = await this.sql.transaction(async (q) => {
        await q(this.upsert, [
          args.keyId,
          windowUs,
          first,
          fits,
          fits,
          args.cost,
          args.limit,
          first,
          args.cost,
          args.limit,
          args.cost,
          windowUs,
        ]);
        const { rows } = await q<WindowRow>(
          `SELECT used, allowed, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(3), window_end) AS reset_us
            FROM ${this.table} WHERE key_id = ?`,
          [args.keyId],
        );
        return rows[0];
      });
      if (!row) throw new Error('the rate-limit row was not there after its upsert');
      return {
        allowed: Number(row.allowed) === 1,
        limit: args.limit,
        remaining: Math.max(0, args.limit - Number(row.used)),
        resetMs: Math.max(0, Math.ceil(Number(row.reset_us) / 1000)),
      };
    });
  }

  /**
   * Grants a slice of `keyId`'s open window in one transaction (the `leases` capability; see
   * `TakeRequest`): opens the window if it ended (locking the row), reads it, counts the grant.
   *
   * @example
   * await limiter.take('key_1', { limit: 100, windowMs: 60_000 }, { need: 1, want: 50, divisor: 8 }); // granted 12
   */
  async take(keyId: string, limit: RateLimit, ask: TakeRequest): Promise<RateLimitLease> {
    const args = validTakeArgs(keyId, limit, ask);
    const windowUs = Math.round(args.windowMs * 1000);
    const ended = 'window_end <= UTC_TIMESTAMP(3)';
    return withLimiterDeadline('MysqlRateLimiter', this.timeoutMs, () =>
      this.sql.transaction(async (q) => {
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
        const granted = grantOf(Math.max(0, args.limit - used), {
          need: args.cost,
          want: args.want,
          divisor: args.divisor,
        });
        if (granted > 0) {
          await q(`UPDATE ${this.table} SET used = used + ?, allowed = TRUE WHERE key_id = ?`, [granted, args.keyId]);
        }
        return {
          granted,
          limit: args.limit,
          remaining: Math.max(0, args.limit - used - granted),
          resetMs: Math.max(0, Math.ceil(Number(row.reset_us) / 1000)),
          window: Number(row.end_us) / 1000,
        };
      }),
    );
  }

  /**
   * Uncounts `units` of `keyId`'s window `window` (the `leases` capability); nothing once it ended.
   *
   * @example
   * await limiter.giveBack('key_1', { limit: 100, windowMs: 60_000 }, lease.window, 5);
   */
  async giveBack(keyId: string, limit: RateLimit, window: number, units: number): Promise<void> {
    const args = validGiveBackArgs(keyId, limit, window, units);
    if (args.cost === 0) return;
    await withLimiterDeadline('MysqlRateLimiter', this.timeoutMs, () =>
      this.sql.query(
        `UPDATE ${this.table} SET used = IF(used > ?, used - ?, 0)
          WHERE key_id = ? AND window_end > UTC_TIMESTAMP(3)
            AND ABS(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', window_end) / 1000 - ?) * 2 < ?`,
        [args.cost, args.cost, args.keyId, window, args.windowMs],
      ),
    );
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
