/**
 * Every error keygate throws carries one of these codes; `switch (err.code)` narrows them.
 *
 * - `invalid_input`: a management input or a construction option was refused; `field` names it.
 * - `key_not_found`: no key has that id (`keyId`).
 * - `key_revoked`: the key (`keyId`) is revoked (`state: 'revoked'`), so it cannot change.
 * - `key_conflict`: a write clashed with what the store holds (duplicate id or digest, a second rotation).
 * - `key_in_use`: a revocation that asked for a quiet period found recent traffic (`lastUsedAt`).
 * - `key_store_unavailable`: the store (or its client) failed or timed out; the client's error is `cause`.
 * - `rate_limiter_unavailable`: a shared rate limiter failed or timed out; the client's error is `cause`.
 * - `store_locked`: an embedded store folder is held by another live process (`holderPid`).
 * - `unsupported`: the store lacks a capability the call needs (writes, usage statistics); `field` names it.
 */
export type KeygateErrorCode =
  | 'invalid_input'
  | 'key_not_found'
  | 'key_revoked'
  | 'key_conflict'
  | 'key_in_use'
  | 'key_store_unavailable'
  | 'rate_limiter_unavailable'
  | 'store_locked'
  | 'unsupported';

/** What a {@link KeygateError} can say beyond its code, as properties (never only in the message). */
export interface KeygateErrorDetails {
  /** The input field or option at fault (e.g. `allowedIps[1]`, `store`). */
  field?: string | undefined;
  /** The id of the key concerned. */
  keyId?: string | undefined;
  /** The state the key was found in, when that was the reason (e.g. `'revoked'`). */
  state?: string | undefined;
  /** The error that caused this one (a store client's error, say). */
  cause?: unknown;
}

/**
 * Base class of every error keygate throws. Messages never contain a raw key; what a caller needs to
 * act on (`field`, `keyId`, `state`) is a property.
 *
 * @example
 * try { await keys.update(id, { allowedIps: ['10/8'] }); }
 * catch (err) { if (err instanceof KeygateError && err.code === 'invalid_input') console.log(err.field); }
 */
export class KeygateError extends Error {
  readonly code: KeygateErrorCode;
  /** The input field or option at fault, for `invalid_input` and `unsupported` (e.g. `allowedIps[1]`). */
  readonly field: string | undefined;
  /** The id of the key concerned, when there is one. */
  readonly keyId: string | undefined;
  /** The state the key was found in, when that was the reason (e.g. `'revoked'`). */
  readonly state: string | undefined;

  constructor(code: KeygateErrorCode, message: string, details: KeygateErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.field = details.field;
    this.keyId = details.keyId;
    this.state = details.state;
  }
}

/**
 * Why an input was refused: a stable code that a form or a program can switch on (the message's
 * wording may change between versions; these codes do not).
 *
 * - `wrong_type`: not the kind of value the field takes (a string, an array, a plain object, a date).
 * - `empty`: an empty or blank string, or an update with nothing to change.
 * - `too_long`: longer than the field allows (the limit is in the message).
 * - `too_many`: a list with more entries than the field allows (the limit is in the message).
 * - `bad_character`: a character the field does not take: a control, bidirectional-override or
 *   line-separator character, a lone surrogate, or (in a permission) anything outside its alphabet.
 * - `no_visible_character`: only spaces and invisible characters (zero-width ones, say).
 * - `key_shaped`: looks like an API key pasted into the wrong field; the value is never repeated.
 * - `unparseable`: not readable as what the field holds (an IP address or CIDR range, a date).
 * - `host_bits_set`: a CIDR range whose address has bits set past its prefix length.
 * - `out_of_range`: a number, a prefix length or a date outside what the field allows.
 * - `not_allowed`: a value or a field the call does not take (an unknown mode, a zone id, a field
 *   that `update` cannot change).
 * - `invalid`: any other refusal (most construction options).
 *
 * @example
 * if (issue.reason === 'no_visible_character') show('Type a name people can see.');
 */
export type InputIssueReason =
  | 'wrong_type'
  | 'empty'
  | 'too_long'
  | 'too_many'
  | 'bad_character'
  | 'no_visible_character'
  | 'key_shaped'
  | 'unparseable'
  | 'host_bits_set'
  | 'out_of_range'
  | 'not_allowed'
  | 'invalid';

/**
 * One refused input: the field, the entry's position for a list (`allowedIps` entry 3 is `index: 3`),
 * why, as a stable {@link InputIssueReason}, and a message for people.
 *
 * @example
 * { field: 'allowedIps', index: 1, reason: 'unparseable', message: 'allow-list entry "10/8" is not ...' }
 */
export interface InputIssue {
  readonly field: string;
  /** The entry's position in a list field (`permissions`, `allowedIps`); absent for the field as a whole. */
  readonly index?: number;
  readonly reason: InputIssueReason;
  readonly message: string;
}

/**
 * What an {@link InvalidInputError} can carry beyond a {@link KeygateError}'s details.
 *
 * @example
 * new InvalidInputError('handler', 'handler must be a function', { reason: 'wrong_type' })
 */
export interface InvalidInputDetails extends Omit<KeygateErrorDetails, 'field'> {
  /** Why, when the error has one issue. @default 'invalid' */
  reason?: InputIssueReason;
  /** Every issue found, when there are several (the first one is `field` and leads the message). */
  issues?: readonly InputIssue[];
}

/**
 * Input to a management call, or an option given to a constructor, was refused; `field` names it
 * (with the entry's position for a list: `allowedIps[1]`) and `issues` lists every refusal found,
 * each with a stable `reason`. Nothing was written.
 *
 * @example
 * new InvalidInputError('mode', 'mode must be "live" or "test"', { reason: 'not_allowed' })
 */
export class InvalidInputError extends KeygateError {
  declare readonly field: string;
  /** Every refusal found, in input order: all the bad entries of a list, all the bad fields of a key. */
  readonly issues: readonly InputIssue[];
  constructor(field: string, message: string, details: InvalidInputDetails = {}) {
    super('invalid_input', message, { ...details, field });
    this.issues = details.issues ?? [{ field, reason: details.reason ?? 'invalid', message }];
  }
}

/**
 * No key has that id.
 *
 * @example
 * await keys.revoke('key_unknown'); // throws KeyNotFoundError: code 'key_not_found', keyId 'key_unknown'
 */
export class KeyNotFoundError extends KeygateError {
  declare readonly keyId: string;
  constructor(id: string) {
    super('key_not_found', `no key with id ${quote(id)}`, { field: 'id', keyId: id });
  }
}

/**
 * The key is revoked; revocation is permanent, so it can be neither changed nor restored.
 *
 * @example
 * await keys.update(revokedId, { name: 'x' }); // throws KeyRevokedError: code 'key_revoked', state 'revoked'
 */
export class KeyRevokedError extends KeygateError {
  declare readonly keyId: string;
  constructor(id: string) {
    super('key_revoked', `key ${quote(id)} is revoked and can no longer be changed`, {
      field: 'id',
      keyId: id,
      state: 'revoked',
    });
  }
}

/**
 * A write clashed with what the store holds: a duplicate id or digest, a key rotated twice, or a
 * conditional write whose record changed meanwhile.
 *
 * @example
 * await keys.rotate(alreadyRotatedId); // throws KeyConflictError: code 'key_conflict', keyId alreadyRotatedId
 */
export class KeyConflictError extends KeygateError {
  constructor(message: string, details: Omit<KeygateErrorDetails, 'cause'> = {}) {
    super('key_conflict', message, details);
  }
}

/**
 * The key still carries traffic, so a revocation that asked for a quiet period was refused.
 *
 * @example
 * await keys.revoke(oldId, { quietForMs: 15 * 60_000 }); // throws KeyInUseError while the old key is in use
 */
export class KeyInUseError extends KeygateError {
  declare readonly keyId: string;
  /** When the key was last used (ISO 8601). */
  readonly lastUsedAt: string;
  constructor(id: string, lastUsedAt: string) {
    super('key_in_use', `key ${quote(id)} was used at ${lastUsedAt}, within the quiet period; not revoked`, {
      field: 'id',
      keyId: id,
      state: 'active',
    });
    this.lastUsedAt = lastUsedAt;
  }
}

/**
 * The key store failed or did not answer in time. `cause` holds the store client's own error.
 *
 * @example
 * throw new KeyStoreUnavailableError('connection refused', err);
 */
export class KeyStoreUnavailableError extends KeygateError {
  constructor(message: string, cause?: unknown) {
    super('key_store_unavailable', message, { cause });
  }
}

/**
 * A shared rate limiter failed or did not answer in time. `cause` holds the client's own error.
 *
 * @example
 * throw new RateLimiterUnavailableError('redis: connection refused', err);
 */
export class RateLimiterUnavailableError extends KeygateError {
  constructor(message: string, cause?: unknown) {
    super('rate_limiter_unavailable', message, { cause });
  }
}

/**
 * An embedded store folder is held by another live process; only one process may write to it.
 *
 * @example
 * throw new StoreLockedError('./.keygate', 4242); // code 'store_locked', holderPid 4242
 */
export class StoreLockedError extends KeygateError {
  /** The folder that is locked. */
  readonly path: string;
  /** The process id of the holder. */
  readonly holderPid: number;
  constructor(path: string, holderPid: number, message?: string) {
    super('store_locked', message ?? `${path} is held by process ${holderPid}`, { field: 'store' });
    this.path = path;
    this.holderPid = holderPid;
  }
}

/**
 * The store lacks a capability the call needs (writes, usage statistics, a change channel).
 *
 * @example
 * await new KeyManager({ store: readOnlyStore }).usage(id); // throws UnsupportedError, field 'store'
 */
export class UnsupportedError extends KeygateError {
  constructor(field: string, message: string) {
    super('unsupported', message, { field });
  }
}

// The one place that knows what a key looks like in free text: a prefix and mode (`mk_live_`)
// followed by key characters, or a long run of key characters on its own (a key pasted without its
// prefix). A key id (`key_` and 20 characters) is neither.
const PREFIX_MODE = '[a-z][a-z0-9]{0,15}_(?:live|test)_';
const KEY_SHAPED = new RegExp(`(${PREFIX_MODE})[0-9A-Za-z]{4,}`, 'g');
const KEY_RUN = /[0-9A-Za-z]{24,}/g;
// Refusing a value as a pasted key asks for more than cutting does (a full random part: 24 or more
// characters after the prefix and mode, or 32 on their own), so that a long but ordinary name passes.
const SECRET_SHAPED = new RegExp(`(?:^|[^a-z0-9])${PREFIX_MODE}[0-9A-Za-z]{24,}|[0-9A-Za-z]{32,}`);

/**
 * Text with anything shaped like an API key cut down to its prefix and mode, and any run of 24 or
 * more letters and digits (a key's random part on its own) cut out: for messages that may carry
 * something a user or a driver echoed back. Key ids (`key_` and 20 characters) are kept.
 *
 * @example
 * redactKeys('bad value mk_live_4f9Qx...') // 'bad value mk_live_…'
 * redactKeys('no key with id key_0123456789abcdefghij') // unchanged
 */
export function redactKeys(text: string): string {
  return text.replace(KEY_SHAPED, '$1…').replace(KEY_RUN, '…');
}

/**
 * Whether a value looks like an API key pasted where something else belongs (a permission name):
 * its prefix and mode followed by at least 24 key characters, or 32 key characters on their own.
 *
 * @example
 * looksLikeKey('email:verify') // false
 * looksLikeKey(generateKey())  // true
 */
export function looksLikeKey(text: string): boolean {
  return SECRET_SHAPED.test(text);
}

/**
 * A user-supplied value quoted for an error message: JSON-quoted, at most 80 characters, and with
 * anything shaped like an API key reduced to its prefix (and any run of 24 or more letters and digits
 * cut out), so a key pasted into the wrong field is never echoed back.
 *
 * @example
 * quote('mk_live_abcd...') // '"mk_live_…"'
 */
export function quote(value: unknown): string {
  let text = typeof value === 'string' ? value : String(value);
  text = redactKeys(text);
  if (text.length > 80) text = `${text.slice(0, 77)}...`;
  return JSON.stringify(text);
}

/**
 * What kind of value a refused input was, without its content: for messages about a value that may
 * be a secret pasted into the wrong place (a mode, an option).
 *
 * @example
 * describeValue('mk_live_…') // 'a string of 46 characters'
 * describeValue([1, 2])      // 'an array of 2 items'
 * describeValue(-1)          // '-1'
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `a string of ${value.length} characters`;
  if (Array.isArray(value)) return `an array of ${value.length} items`;
  return value === null ? 'null' : typeof value === 'number' ? String(value) : `a value of type ${typeof value}`;
}

/**
 * Refuses options of earlier versions by their old names, so that a caller still using one hears of
 * it instead of having it ignored: `renamed` maps each old name to what replaced it.
 *
 * @example
 * refuseRenamed(options, { now: 'clock' }) // throws InvalidInputError, field 'now', if options.now is set
 */
export function refuseRenamed(options: object | null | undefined, renamed: Readonly<Record<string, string>>): void {
  if (options === null || typeof options !== 'object') return;
  for (const old in renamed) {
    if (old in options) throw new InvalidInputError(old, `the option ${old} was renamed ${renamed[old]}`);
  }
}
