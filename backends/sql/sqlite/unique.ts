import type { DuplicateKey } from '../key-conflict.js';

/**
 * The column of a UNIQUE or PRIMARY KEY constraint that `err` broke (`keygate_keys.hash`), or
 * undefined for any other error. SQLite's own message names it, whichever driver carried it
 * (better-sqlite3, node:sqlite, D1).
 *
 * @example
 * uniqueViolation(new Error('UNIQUE constraint failed: keygate_keys.hash')) // 'keygate_keys.hash'
 */
export function uniqueViolation(err: unknown): string | undefined {
  const message = err instanceof Error ? err.message : '';
  return /UNIQUE constraint failed: ([\w.]+)/.exec(message)?.[1];
}

/**
 * The unique constraint of `keygate_keys` a failed insert broke, from SQLite's error or a keygate
 * error carrying it as `cause`.
 *
 * @example
 * duplicate: sqliteDuplicateKey,
 */
export function sqliteDuplicateKey(err: unknown): DuplicateKey {
  const column = uniqueViolation((err as { cause?: unknown } | null)?.cause ?? err);
  return column === 'keygate_keys.hash' ? 'hash' : column === 'keygate_keys.id' ? 'id' : undefined;
}
