// One sample of the figures the soak watches: each process's heap (after a full GC) and RSS, the
// run's open connections, and the size of what the store holds: PostgreSQL's rows and
// pg_total_relation_size per table of the run's schema; Redis's entries (elements of each key) and
// MEMORY USAGE per key pattern under the run's prefix, with DBSIZE and used_memory.
import type { Backend, Namespace } from './backends.js';
import { connectionName } from './backends.js';

export interface ProcessFigures {
  readonly name: string;
  readonly heapUsed: number;
  readonly rss: number;
  /** Memory of objects outside the V8 heap (Buffers), after the same GC. */
  readonly external: number;
  readonly cpuMs: number;
}

export interface TableFigures {
  /** A PostgreSQL table, or a Redis key pattern (`usage:*`, `credits:{account}:entries`). */
  readonly name: string;
  /** Rows; for Redis, the elements of every key of the pattern (1 for a string). */
  readonly rows: number;
  readonly bytes: number;
  /** Redis: keys of the pattern. */
  readonly keys?: number;
}

export interface Sample {
  readonly label: string;
  /** Milliseconds since traffic started. */
  readonly atMs: number;
  readonly processes: readonly ProcessFigures[];
  /** The run's connections to the store, and everyone's (the database, the Redis server). */
  readonly connections: { readonly ours: number; readonly everyone: number };
  readonly tables: readonly TableFigures[];
  /** Redis: DBSIZE of the run's database and the server's used_memory. */
  readonly redis?: { readonly dbsize: number; readonly usedMemory: number };
}

/**
 * The runner's own process figures (after a full GC when node runs with --expose-gc).
 *
 * @example
 * ownFigures() // { name: 'runner', heapUsed, rss, external, cpuMs }
 */
export function ownFigures(): ProcessFigures {
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  const { heapUsed, rss, external } = memory;
  return { name: 'runner', heapUsed, rss, external, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/**
 * The run's connections and table sizes in `ns`, read through the runner's `parts`.
 *
 * @example
 * const { connections, tables } = await storeFigures(ns, parts);
 */
export async function storeFigures(
  ns: Namespace,
  parts: Backend,
): Promise<Pick<Sample, 'connections' | 'tables' | 'redis'>> {
  return parts.pool ? postgresFigures(ns, parts.pool) : redisFigures(ns, parts.redis as NonNullable<Backend['redis']>);
}

async function postgresFigures(ns: Namespace, pool: NonNullable<Backend['pool']>) {
  const { rows: conns } = await pool.query<{ ours: string; everyone: string }>(
    `SELECT count(*) FILTER (WHERE application_name LIKE $1) AS ours, count(*) AS everyone
       FROM pg_stat_activity WHERE datname = current_database()`,
    [`${connectionName(ns, '')}%`],
  );
  const { rows: relations } = await pool.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
    [ns.schema],
  );
  const tables: TableFigures[] = [];
  for (const { name, bytes } of relations) {
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${ns.schema}"."${name}"`);
    tables.push({ name, rows: Number(rows[0]?.n), bytes: Number(bytes) });
  }
  const counts = conns[0] ?? { ours: '0', everyone: '0' };
  return { connections: { ours: Number(counts.ours), everyone: Number(counts.everyone) }, tables };
}

// The pattern of a Redis key under the prefix: words kept, ids and hash tags replaced.
function patternOf(rest: string): string {
  return rest
    .split(':')
    .map((part, i) => (part.startsWith('{') ? '{account}' : i === 0 || /^[a-z-]+$/.test(part) ? part : '*'))
    .join(':');
}

const CARDINALITY: Record<string, string> = { hash: 'HLEN', zset: 'ZCARD', set: 'SCARD', list: 'LLEN', stream: 'XLEN' };

async function redisFigures(ns: Namespace, redis: NonNullable<Backend['redis']>) {
  const send = (args: string[]) => redis.sendCommand(args);
  const clients = String(await send(['CLIENT', 'LIST']))
    .split('\n')
    .filter((line) => line.trim() !== '');
  const ours = clients.filter((line) => / name=(\S+)/.exec(line)?.[1]?.startsWith(connectionName(ns, ''))).length;
  const info = String(await send(['INFO', 'memory']));
  const usedMemory = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
  const dbsize = Number(await send(['DBSIZE']));
  const byPattern = new Map<string, { rows: number; bytes: number; keys: number }>();
  let cursor = '0';
  do {
    const [next, found] = (await send(['SCAN', cursor, 'MATCH', `${ns.prefix}*`, 'COUNT', '500'])) as [
      string,
      string[],
    ];
    cursor = next;
    // Sent together: node-redis pipelines the commands of one tick.
    const figures = await Promise.all(
      found.map(async (key) => {
        const type = String(await send(['TYPE', key]));
        const card = CARDINALITY[type];
        const [rows, bytes] = await Promise.all([
          card ? send([card, key]) : Promise.resolve(type === 'none' ? 0 : 1),
          send(['MEMORY', 'USAGE', key, 'SAMPLES', '0']),
        ]);
        return { key, rows: Number(rows), bytes: Number(bytes ?? 0) };
      }),
    );
    for (const { key, rows, bytes } of figures) {
      const pattern = patternOf(key.slice(ns.prefix.length));
      const entry = byPattern.get(pattern) ?? { rows: 0, bytes: 0, keys: 0 };
      entry.rows += rows;
      entry.bytes += bytes;
      entry.keys++;
      byPattern.set(pattern, entry);
    }
  } while (cursor !== '0');
  const tables = [...byPattern.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, f]) => ({ name, rows: f.rows, bytes: f.bytes, keys: f.keys }));
  return { connections: { ours, everyone: clients.length }, tables, redis: { dbsize, usedMemory } };
}
