import type { RateLimitDecision } from 'keygate';
import { BackendRateLimiter, type ConsumeArgs, type RateLimitLease, type TakeArgs } from 'keygate/store-kit';
import type { Pool } from 'pg';
import { type PGliteLike, type SqlClient, sqlClient, validSchema } from './sql-client.js';

/**
 * Options of {@link PostgresRateLimiter}.
 *
 * @example
 * const options: PostgresRateLimiterOptions = { client: new pg.Pool({ connectionString }), schema: 'keygate', timeoutMs: 100 };
 */
export interface PostgresRateLimiterOptions {
  /** A `pg` Pool (not a single Client) or a PGlite instance. The caller owns it and ends it. */
  client: Pool | PGliteLike;
  /**
   * Schema of the `keygate_rate_limits` table, created by `migrate()` if missing. Lower-case
   * letters, digits and `_`, at most 40 characters.
   *
   * @default 'public'
   */
  schema?: string;
  /**
   * Milliseconds to wait for the database before `consume` rejects with `RateLimiterUnavailableError`.
   * The limiter declares it as its `deadline` capability, so `authenticate` arms no second timer.
   *
   * @default 250
   */
  timeoutMs?: number;
}

// Every member of {@link PostgresRateLimiterOptions}: any other is refused (`unknown_option`).
const OPTION_NAMES = Object.keys({ client: true, schema: true, timeoutMs: true } satisfies Record<
  keyof PostgresRateLimiterOptions,
  true
>);

// Not the key store's lock class: the two migrations may run at once without waiting for each other.
const LOCK_CLASS = 0x6b68;

interface WindowRow {
  used: string | number;
  allowed: boolean;
  reset_ms: string | number;
}

/**
 * A rate limiter in PostgreSQL (through a `pg` Pool) or PGlite, exact across every process that
 * shares the database: one row per key (`keygate_rate_limits`), read and changed by one
 * `INSERT ... ON CONFLICT DO UPDATE ... RETURNING` per request. The row lock serialises concurrent
 * requests for a key, and each sees the count the previous one left, so none over-counts. Windows
 * are timed by the database's clock (see `RateLimiter` for what that allows at window boundaries).
 * A row stays after its window ends (one per key that was ever limited) and is reused by the key's
 * next window; `prune()` deletes ended ones. A consume that timed out may still have been counted.
 *
 * @example
 * const limiter = new PostgresRateLimiter({ client: new pg.Pool({ connectionString }) });
 * await limiter.migrate();
 * const { allowed, remaining } = await limiter.consume(key.id, { limit: 100, windowMs: 60_000 }, 1);
 */
export class PostgresRateLimiter extends BackendRateLimiter {
  readonly schema: string;
  private readonly sql: SqlClient;
  private readonly table: string;
  private readonly statement: string;
  private readonly takeStatement: string;

  constructor(options: PostgresRateLimiterOptions) {
    const sql = sqlClient(options?.client);
    const schema = validSchema(options.schema ?? 'public');
    super('PostgresRateLimiter', options.timeoutMs, 250, { options, names: OPTION_NAMES });
    this.sql = sql;
    this.schema = schema;
    // The schema is validated above and quoted, never taken from request data; values always go as parameters.
    this.table = `"${schema}".keygate_rate_limits`;
    this.statement = consumeStatement(this.table);
    this.takeStatement = takeStatement(this.table);
  }

  /**
   * Creates the schema (unless `public`) and the table if missing. Idempotent; concurrent callers
   * are serialised by an advisory lock.
   *
   * @example
   * await limiter.migrate(); // at start-up, before the first request
   */
  async migrate(): Promise<void> {
    await this.sql.transaction(async (q) => {
      await q('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, this.schema]);
      if (this.schema !== 'public') await q(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      // `allowed` is the outcome of the latest request, written by the same statement so RETURNING can carry it.
      await q(`CREATE TABLE IF NOT EXISTS ${this.table} (
        key_id text PRIMARY KEY,
        window_end timestamptz NOT NULL,
        used bigint NOT NULL CHECK (used >= 0),
        allowed boolean NOT NULL
      )`);
      // The latest take's grant (the leases capability), written by the same statement as `used`.
      await q(`ALTER TABLE ${this.table} ADD COLUMN IF NOT EXISTS granted bigint NOT NULL DEFAULT 0`);
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
    const { rows } = await this.sql.query<{ n: string | number }>(
      `WITH gone AS (DELETE FROM ${this.table} WHERE window_end <= now() RETURNING 1) SELECT count(*) AS n FROM gone`,
    );
    return Number(rows[0]?.n ?? 0);
  }

  // One statement per request.
  protected async count(args: ConsumeArgs): Promise<RateLimitDecision> {
    const { rows } = await this.sql.query<WindowRow>(this.statement, [
      args.keyId,
      args.windowMs,
      args.limit,
      args.cost,
    ]);
    const row = rows[0];
    if (!row) throw new Error('the rate-limit statement returned no row');
    return this.decision(args.limit, Number(row.used), row.allowed === true, Number(row.reset_ms));
  }

  // One statement per take; needs the `granted` column that `migrate()` adds.
  protected async grant(args: TakeArgs): Promise<RateLimitLease> {
    const params = [args.keyId, args.windowMs, args.limit, args.cost, args.want, args.divisor];
    const { rows } = await this.sql.query<TakeRow>(this.takeStatement, params);
    const row = rows[0];
    if (!row) throw new Error('the rate-limit take statement returned no row');
    return this.lease(args.limit, Number(row.granted), Number(row.used), Number(row.reset_ms), Number(row.window_ms));
  }

  protected uncount(args: ConsumeArgs, window: number): Promise<unknown> {
    return this.sql.query(
      `UPDATE ${this.table} SET used = GREATEST(0, used - $2::bigint)
        WHERE key_id = $1 AND window_end > now()
          AND abs(extract(epoch FROM window_end) * 1000 - $3::float8) * 2 < $4::float8`,
      [args.keyId, args.cost, window, args.windowMs],
    );
  }
}

interface TakeRow {
  used: string | number;
  granted: string | number;
  reset_ms: string | number;
  window_ms: string | number;
}

/**
 * The take of the leases capability: `TakeRequest`'s grant rule in one upsert. $1 key id, $2 window
 * (whole ms), $3 limit, $4 need, $5 want, $6 divisor. Every SET expression reads the row as it was.
 */
function takeStatement(table: string): string {
  const grant = (remaining: string) =>
    `CASE WHEN ${remaining} >= $4::bigint THEN LEAST(${remaining}, GREATEST($4::bigint, LEAST($5::bigint, ${remaining} / $6::bigint))) ELSE 0 END`;
  const ended = 'r.window_end <= now()';
  const left = `GREATEST(0, $3::bigint - CASE WHEN ${ended} THEN 0 ELSE r.used END)`;
  return `INSERT INTO ${table} AS r (key_id, window_end, used, allowed, granted)
    VALUES ($1, now() + $2::bigint * interval '1 millisecond', ${grant('$3::bigint')}, true, ${grant('$3::bigint')})
    ON CONFLICT (key_id) DO UPDATE SET
      window_end = CASE WHEN ${ended} THEN EXCLUDED.window_end ELSE r.window_end END,
      used = CASE WHEN ${ended} THEN 0 ELSE r.used END + ${grant(left)},
      allowed = true,
      granted = ${grant(left)}
    RETURNING r.used, r.granted, ceil(extract(epoch FROM r.window_end - now()) * 1000) AS reset_ms,
      extract(epoch FROM r.window_end) * 1000 AS window_ms`;
}

/**
 * The one statement per request. $1 key id, $2 window (whole ms), $3 limit, $4 cost. SET expressions
 * read the row as it was before this statement; now() is the statement's start, one value throughout.
 */
function consumeStatement(table: string): string {
  const ended = 'r.window_end <= now()';
  const fits = 'r.used + $4::bigint <= $3::bigint';
  return `INSERT INTO ${table} AS r (key_id, window_end, used, allowed)
    VALUES ($1, now() + $2::bigint * interval '1 millisecond',
      CASE WHEN $4::bigint <= $3::bigint THEN $4::bigint ELSE 0 END, $4::bigint <= $3::bigint)
    ON CONFLICT (key_id) DO UPDATE SET
      window_end = CASE WHEN ${ended} THEN EXCLUDED.window_end ELSE r.window_end END,
      used = CASE WHEN ${ended} THEN EXCLUDED.used WHEN ${fits} THEN r.used + $4::bigint ELSE r.used END,
      allowed = CASE WHEN ${ended} THEN EXCLUDED.allowed ELSE ${fits} END
    RETURNING r.used, r.allowed, ceil(extract(epoch FROM r.window_end - now()) * 1000) AS reset_ms`;
}
