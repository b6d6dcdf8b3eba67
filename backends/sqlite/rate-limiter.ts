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
import { type SqliteDatabase, type SqliteDriver, sqliteDriver } from './driver.js';
import { migrateTables } from './migrate.js';
import { RATE_LIMIT_TABLES } from './migrations.js';
import { consumeParams, RATE_LIMIT_SQL } from './sql/rate-limit.js';

/**
 * Options of {@link SqliteRateLimiter}.
 *
 * @example
 * const options: SqliteRateLimiterOptions = { database: new Database('keygate.db'), timeoutMs: 100 };
 */
export interface SqliteRateLimiterOptions {
  /** A `better-sqlite3` Database or a `node:sqlite` DatabaseSync (or a `SqliteDriver`). The caller owns it. */
  database: SqliteDatabase;
  /**
   * Milliseconds a `consume` waits for the file's write lock (SQLite's `busy_timeout`) before it
   * rejects with `RateLimiterUnavailableError`; declared as the limiter's `deadline`. A whole number.
   *
   * @default 250
   */
  timeoutMs?: number;
}

interface WindowRow {
  used: number;
  allowed: number;
  window_end: number;
}

interface OpenRow {
  used: number;
  window_end: number;
}

/**
 * A rate limiter in a SQLite file, exact across every process on the machine that opens it: one row
 * per key (`keygate_rate_limits`), read and changed by one upsert per request inside a
 * `BEGIN IMMEDIATE` transaction, so requests from any process are counted one at a time. Windows are
 * timed by the machine's clock (every process reads the same one). A row stays after its window ends
 * and is reused by the key's next window; `prune()` deletes ended ones. The calls are synchronous
 * underneath: a `consume` waiting for the lock blocks its thread for at most `timeoutMs`.
 *
 * @example
 * const limiter = new SqliteRateLimiter({ database });
 * await limiter.migrate();
 * const { allowed, remaining } = await limiter.consume(key.id, { limit: 100, windowMs: 60_000 }, 1);
 */
export class SqliteRateLimiter implements RateLimiter, LeasableRateLimiter, Capable {
  /** Its `deadline` (each call settles within `timeoutMs`, the lock wait) and `leases` (`take`, `giveBack`). */
  declare readonly [CAPABILITIES]: Capabilities;
  /** Milliseconds a `consume` may wait for the write lock. */
  readonly timeoutMs: number;
  private readonly driver: SqliteDriver;

  constructor(options: SqliteRateLimiterOptions) {
    this.driver = sqliteDriver(options?.database);
    this.timeoutMs = Math.ceil(validTimeoutMs(options.timeoutMs, 250));
    this[CAPABILITIES] = { deadline: this, leases: this };
  }

  /**
   * Puts the file in WAL mode and creates the table if missing. Idempotent. Never run implicitly.
   *
   * @example
   * await limiter.migrate(); // at start-up, before the first request
   */
  migrate(): Promise<void> {
    return withLimiterDeadline('SqliteRateLimiter', 60_000, async () =>
      migrateTables(this.driver, RATE_LIMIT_TABLES, this.timeoutMs),
    );
  }

  /**
   * Counts `cost` units against `keyId`. Rejects with `InvalidInputError` for bad arguments and with
   * `RateLimiterUnavailableError` when SQLite fails or the lock is not had within `timeoutMs`.
   *
   * @example
   * await limiter.consume('key_1', { limit: 10, windowMs: 1000 }, 1); // { allowed: true, limit: 10, remaining: 9, resetMs: 1000 }
   */
  async consume(keyId: string, limit: RateLimit, cost: number): Promise<RateLimitDecision> {
    const args = validConsumeArgs(keyId, limit, cost);
    return withLimiterDeadline('SqliteRateLimiter', this.timeoutMs, async () => {
      const { row, now } = this.driver.transaction(() => {
        const now = Date.now();
        const params = consumeParams(args.keyId, args.limit, args.windowMs, args.cost, now);
        return { row: this.driver.get<WindowRow>(RATE_LIMIT_SQL.consume, params), now };
      }, this.timeoutMs);
      if (!row) throw new Error('the rate-limit statement returned no row');
      return {
        allowed: row.allowed === 1,
        limit: args.limit,
        remaining: Math.max(0, args.limit - Number(row.used)),
        resetMs: Math.max(0, Number(row.window_end) - now),
      };
    });
  }

  /**
   * Grants a slice of `keyId`'s open window in one write transaction (the `leases` capability; see
   * `TakeRequest`): opens the window if none is open, reads it and counts the grant under the file's
   * write lock, so takes and consumes from every process are counted one at a time. The window's
   * identity is its end (epoch ms, the machine's clock).
   *
   * @example
   * await limiter.take('key_1', { limit: 100, windowMs: 60_000 }, { need: 1, want: 50, divisor: 8 }); // granted 12
   */
  async take(keyId: string, limit: RateLimit, ask: TakeRequest): Promise<RateLimitLease> {
    const args = validTakeArgs(keyId, limit, ask);
    return withLimiterDeadline('SqliteRateLimiter', this.timeoutMs, async () =>
      this.driver.transaction(() => {
        const now = Date.now();
        const row = this.driver.get<OpenRow>(RATE_LIMIT_SQL.open, [args.keyId, now + args.windowMs, now, now]);
        if (!row) throw new Error('the rate-limit take statement returned no row');
        const used = Number(row.used);
        const granted = grantOf(Math.max(0, args.limit - used), {
          need: args.cost,
          want: args.want,
          divisor: args.divisor,
        });
        if (granted > 0) this.driver.run(RATE_LIMIT_SQL.grant, [granted, args.keyId]);
        const windowEnd = Number(row.window_end);
        return {
          granted,
          limit: args.limit,
          remaining: Math.max(0, args.limit - used - granted),
          resetMs: Math.max(0, windowEnd - now),
          window: windowEnd,
        };
      }, this.timeoutMs),
    );
  }

  /**
   * Uncounts `units` of `keyId`'s window `window` (the `leases` capability), never below 0; nothing
   * once that window has ended.
   *
   * @example
   * await limiter.giveBack('key_1', { limit: 100, windowMs: 60_000 }, lease.window, 5);
   */
  async giveBack(keyId: string, limit: RateLimit, window: number, units: number): Promise<void> {
    const args = validGiveBackArgs(keyId, limit, window, units);
    if (args.cost === 0) return;
    await withLimiterDeadline('SqliteRateLimiter', this.timeoutMs, async () =>
      this.driver.transaction(
        () => this.driver.run(RATE_LIMIT_SQL.giveBack, [args.cost, args.keyId, Date.now(), window, args.windowMs]),
        this.timeoutMs,
      ),
    );
  }

  /**
   * Deletes the rows of windows that have ended. Optional housekeeping. Returns how many went.
   *
   * @example
   * setInterval(() => limiter.prune().catch(() => {}), 3_600_000);
   */
  prune(): Promise<number> {
    return withLimiterDeadline('SqliteRateLimiter', this.timeoutMs, async () =>
      this.driver.transaction(() => this.driver.run(RATE_LIMIT_SQL.prune, [Date.now()]).changes, this.timeoutMs),
    );
  }
}
