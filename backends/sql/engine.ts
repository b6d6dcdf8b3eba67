import type { TimeCodec } from './key-record.js';
import type { SqlRunner, SqlTx } from './step.js';

/**
 * What every capability of the SQL core needs of an engine: how statements run, how instants are
 * stored, and where a table lives. A backend builds one per connection; each capability's dialect
 * adds the statements that differ.
 *
 * @example
 * const engine: SqlEngine = { runner: sqliteRunner(driver, 2_000), time: ISO_TIME, table: (name) => `keygate_${name}` };
 */
export interface SqlEngine<X extends SqlTx = SqlTx> {
  readonly runner: SqlRunner<X>;
  readonly time: TimeCodec;
  /** The full name of keygate's table `name` (`keys`, `audit`, `webhook_endpoints`, ...), quoted where the engine needs it. */
  table(name: string): string;
  /**
   * Whether a batch of a DELETE is chosen by `ORDER BY ... LIMIT` on the DELETE itself (MySQL and
   * MariaDB, which refuse a LIMIT in an `IN` subquery); otherwise by a subquery with a LIMIT.
   * @default false
   */
  readonly deleteLimit?: boolean;
}
