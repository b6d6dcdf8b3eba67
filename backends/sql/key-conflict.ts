import { KeyConflictError } from 'keygate';
import { quote } from 'keygate/store-kit';

/**
 * The unique constraint of the key table an INSERT broke, as a dialect reads it from its driver's
 * error: the digest's index, the primary key, or undefined for any other failure.
 *
 * @example
 * const broken: DuplicateKey = /keys_hash/.test(message) ? 'hash' : 'id';
 */
export type DuplicateKey = 'hash' | 'id' | undefined;

/**
 * The `KeyConflictError` an insert answers for a duplicate digest or id, or undefined for any other failure.
 *
 * @example
 * throw keyConflict(dialect.duplicate(err), record.id) ?? err;
 */
export function keyConflict(broken: DuplicateKey, id: string): KeyConflictError | undefined {
  if (broken === 'hash') return new KeyConflictError('a key with the same digest already exists', { keyId: id });
  if (broken === 'id') return new KeyConflictError(`a key with id ${quote(id)} already exists`, { keyId: id });
  return undefined;
}
