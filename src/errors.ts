/** Every error keygate throws carries one of these codes; `switch (err.code)` narrows them. */
export type KeygateErrorCode =
  | 'invalid_input'
  | 'key_not_found'
  | 'key_revoked'
  | 'key_conflict'
  | 'key_in_use'
  | 'key_store_unavailable';

/**
 * Base class of every error keygate throws. Messages never contain a raw key.
 *
 * @example
 * try { await keys.update(id, { allowedIps: ['10/8'] }); }
 * catch (err) { if (err instanceof KeygateError && err.code === 'invalid_input') console.log(err.field); }
 */
export class KeygateError extends Error {
  readonly code: KeygateErrorCode;
  /** The input field at fault, for `invalid_input` (e.g. `allowedIps[1]`). */
  readonly field: string | undefined;

  constructor(code: KeygateErrorCode, message: string, options?: { field?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.field = options?.field;
  }
}

/**
 * Input to a management call was refused; `field` names it. Nothing was written.
 *
 * @example
 * new InvalidInputError('mode', 'mode must be "live" or "test", got "prod"')
 */
export class InvalidInputError extends KeygateError {
  declare readonly field: string;
  constructor(field: string, message: string) {
    super('invalid_input', message, { field });
  }
}

/**
 * No key has that id.
 *
 * @example
 * await keys.revoke('key_unknown'); // throws KeyNotFoundError, code 'key_not_found'
 */
export class KeyNotFoundError extends KeygateError {
  constructor(id: string) {
    super('key_not_found', `no key with id ${quote(id)}`, { field: 'id' });
  }
}

/**
 * The key is revoked; revocation is permanent, so it can be neither changed nor restored.
 *
 * @example
 * await keys.update(revokedId, { name: 'x' }); // throws KeyRevokedError, code 'key_revoked'
 */
export class KeyRevokedError extends KeygateError {
  constructor(id: string) {
    super('key_revoked', `key ${quote(id)} is revoked and can no longer be changed`, { field: 'id' });
  }
}

/**
 * A write clashed with an existing record (duplicate id or digest), or a key was rotated twice.
 *
 * @example
 * await keys.rotate(alreadyRotatedId); // throws KeyConflictError, code 'key_conflict'
 */
export class KeyConflictError extends KeygateError {
  constructor(message: string) {
    super('key_conflict', message);
  }
}

/**
 * The key still carries traffic, so a revocation that asked for a quiet period was refused.
 *
 * @example
 * await keys.revoke(oldId, { ifQuietFor: 15 * 60_000 }); // throws KeyInUseError while the old key is in use
 */
export class KeyInUseError extends KeygateError {
  constructor(id: string, lastUsedAt: string) {
    super('key_in_use', `key ${quote(id)} was used at ${lastUsedAt}, within the quiet period; not revoked`, {
      field: 'id',
    });
  }
}

/**
 * The key store failed or did not answer in time.
 *
 * @example
 * throw new KeyStoreUnavailableError('connection refused', err);
 */
export class KeyStoreUnavailableError extends KeygateError {
  constructor(message: string, cause?: unknown) {
    super('key_store_unavailable', message, { cause });
  }
}

// Anything shaped like a key (prefix, mode, then key characters) is cut down to its hint.
const KEY_SHAPED = /([a-z][a-z0-9]{0,15}_(?:live|test)_)[0-9A-Za-z]{4,}/g;

/**
 * A user-supplied value quoted for an error message: JSON-quoted, at most 80 characters, and with
 * anything shaped like an API key reduced to its prefix, so a key pasted into the wrong field is
 * never echoed back.
 *
 * @example
 * quote('mk_live_abcd...') // '"mk_live_…"'
 */
export function quote(value: unknown): string {
  let text = typeof value === 'string' ? value : String(value);
  text = text.replace(KEY_SHAPED, '$1…');
  if (text.length > 80) text = `${text.slice(0, 77)}...`;
  return JSON.stringify(text);
}
