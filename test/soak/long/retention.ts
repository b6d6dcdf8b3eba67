// Retention during the soak: every so often, `prune({ olderThanMs })` on each part that has one (the
// store's outbox, audit log and usage, the shared credit ledger, the shared rate limiter). `prune` is
// arriving capability by capability, so it is looked up on each part at run time, and the report says
// which parts had one and what they removed.
import { capabilityOf } from 'keygate';
import type { Backend } from './backends.js';

type Prunable = { prune(options: { olderThanMs: number }): Promise<unknown> };

export interface PrunePart {
  readonly name: string;
  /** Whether the part has a `prune` method. */
  readonly present: boolean;
  runs: number;
  failures: number;
  /** The sum of what `prune` answered, when it answers a number (or `{ deleted }`, `{ removed }`...). */
  removed: number;
  lastError?: string;
}

export interface Retention {
  readonly parts: readonly PrunePart[];
  readonly olderThanMs: number;
  /** One pass over every part that has `prune`. */
  run(): Promise<void>;
}

// What a prune answered, as a number of rows or entries removed when it says so.
function countOf(answer: unknown): number {
  if (typeof answer === 'number') return answer;
  if (answer && typeof answer === 'object') {
    let sum = 0;
    for (const value of Object.values(answer)) if (typeof value === 'number') sum += value;
    return sum;
  }
  return 0;
}

/**
 * A PostgreSQL server with `autovacuum = off` (as a test server may be) never reuses the space of
 * deleted rows, so every table that rows pass through grows on disk however flat its row count: then
 * the soak vacuums its own tables with each prune pass, as autovacuum would (and as a production server
 * does by default), and the report says so.
 */
async function ownVacuum(parts: Backend, schema: string | undefined): Promise<Prunable | undefined> {
  const pool = parts.pool;
  if (!pool || schema === undefined) return undefined;
  const { rows } = await pool.query<{ autovacuum: string }>('SHOW autovacuum');
  if (rows[0]?.autovacuum !== 'off') return undefined;
  return {
    async prune() {
      const tables = await pool.query<{ name: string }>(
        'SELECT tablename AS name FROM pg_tables WHERE schemaname = $1',
        [schema],
      );
      for (const { name } of tables.rows) await pool.query(`VACUUM "${schema}"."${name}"`);
      return 0;
    },
  };
}

/**
 * The retention of `parts`, keeping `olderThanMs` of history.
 *
 * @example
 * const retention = await retentionOf(runnerParts, 120_000, 'keygate_soak_x'); await retention.run();
 */
export async function retentionOf(parts: Backend, olderThanMs: number, schema?: string): Promise<Retention> {
  const candidates: [string, unknown][] = [
    ['outbox', capabilityOf(parts.store, 'outbox')],
    ['audit log', capabilityOf(parts.store, 'audit')],
    ['usage', capabilityOf(parts.store, 'usage')],
    ['credit ledger', parts.ledger],
    ['rate limiter', parts.limiter],
  ];
  const vacuum = await ownVacuum(parts, schema);
  if (vacuum) candidates.push(['VACUUM (the server runs no autovacuum)', vacuum]);
  const found = candidates.map(([name, part]) => {
    const prune = (part as Partial<Prunable> | undefined)?.prune;
    return {
      report: { name, present: typeof prune === 'function', runs: 0, failures: 0, removed: 0 } as PrunePart,
      part: part as Prunable,
    };
  });
  return {
    parts: found.map((f) => f.report),
    olderThanMs,
    async run() {
      for (const { report, part } of found) {
        if (!report.present) continue;
        try {
          report.removed += countOf(await part.prune({ olderThanMs }));
          report.runs++;
        } catch (err) {
          report.failures++;
          report.lastError = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        }
      }
    },
  };
}
