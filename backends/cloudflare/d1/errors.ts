import { InvalidInputError, KeygateError, KeyStoreUnavailableError } from 'keygate';
import { quote } from 'keygate/store-kit';
import type { D1Like } from './bindings.js';

/**
 * The error a D1 store method throws for `err`: keygate's own errors as they are; anything D1 threw
 * (a network failure, an overloaded database, a missing table) becomes `KeyStoreUnavailableError`
 * (503 through `authenticate`) with D1's error as `cause`.
 *
 * @example
 * try { await statement.run() } catch (err) { throw d1Error(err) }
 */
export function d1Error(err: unknown): KeygateError {
  if (err instanceof KeygateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new KeyStoreUnavailableError(`D1 failed: ${quote(message)}`, err);
}

/**
 * Runs `work` and turns whatever D1 throws into a keygate error (see {@link d1Error}).
 *
 * @example
 * return d1Guarded(() => db.prepare(sql).bind(id).first());
 */
export async function d1Guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw d1Error(err);
  }
}

/**
 * `value` if it is a D1 binding (it has `prepare` and `batch`); otherwise `InvalidInputError` naming `db`.
 *
 * @example
 * const db = validD1(env.DB);
 */
export function validD1(value: unknown): D1Like {
  const db = value as Partial<D1Like> | null | undefined;
  if (typeof db?.prepare !== 'function' || typeof db.batch !== 'function') {
    throw new InvalidInputError('db', 'db must be a D1 database binding (with prepare and batch), such as env.DB');
  }
  return db as D1Like;
}
