import type { RateLimitDecision } from 'keygate';
import {
  BackendRateLimiter,
  type ConsumeArgs,
  type RateLimitLease,
  type TakeArgs,
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

// Every member of {@link SqliteRateLimiterOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ database: true, timeoutMs: true } satisfies Record<
  keyof SqliteRateLimiterOptions,
  true
>);

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
export class SqliteRateLimiter extends BackendRateLimiter {
  private readonly driver: SqliteDriver;

  constructor(options: SqliteRateLimiterOptions) {
    const driver = sqliteDriver(options?.database);
    // A whole number: SQLite's busy_timeout, the lock wait, is the deadline.
    super('SqliteRateLimiter', Math.ceil(validTimeoutMs(options.timeoutMs, 250)), 250, {
      options,
      names: OPTION_NAMES,
    });
    this.driver = driver;
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
   * Deletes the rows of windows that have ended. Optional housekeeping. Returns how many went.
   *
   * @example
   * setInterval(() => limiter.prune().catch(() => {}), 3_600_000);
   */
  prune(): Promise<number> {
    return this.bounded(async () => this.write(() => this.driver.run(RATE_LIMIT_SQL.prune, [Date.now()]).changes));
  }

  // One upsert inside a write transaction, timed by the clock read once the lock is held.
  protected async count(args: ConsumeArgs): Promise<RateLimitDecision> {
    const { row, now } = this.write(() => {
      const now = Date.now();
      const params = consumeParams(args.keyId, args.limit, args.windowMs, args.cost, now);
      return { row: this.driver.get<WindowRow>(RATE_LIMIT_SQL.consume, params), now };
    });
    if (!row) throw new Error('the rate-limit statement returned no row');
    return this.decision(args.limit, Number(row.used), row.allowed === 1, Number(row.window_end) - now);
  }

  // Opens the window if none is open, reads it and counts the grant under the file's write lock, so
  // takes and consumes from every process are counted one at a time. A window is named by its end.
  protected async grant(args: TakeArgs): Promise<RateLimitLease> {
    return this.write(() => {
      const now = Date.now();
      const row = this.driver.get<OpenRow>(RATE_LIMIT_SQL.open, [args.keyId, now + args.windowMs, now, now]);
      if (!row) throw new Error('the rate-limit take statement returned no row');
      const used = Number(row.used);
      const granted = this.grantFor(args, used);
      if (granted > 0) this.driver.run(RATE_LIMIT_SQL.grant, [granted, args.keyId]);
      const windowEnd = Number(row.window_end);
      return this.lease(args.limit, granted, used + granted, windowEnd - now, windowEnd);
    });
  }

  protected async uncount(args: ConsumeArgs, window: number): Promise<unknown> {
    return this.write(() =>
      this.driver.run(RATE_LIMIT_SQL.giveBack, [args.cost, args.keyId, Date.now(), window, args.windowMs]),
    );
  }

  /** Runs `work` in one write transaction, waiting at most `timeoutMs` for the lock. */
  private write<T>(work: () => T): T {
    return this.driver.transaction(work, this.timeoutMs);
  }
}
