import { quote } from './redact/describe.js';
import { redactKeys } from './redact/keys.js';

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
 * - `credit_ledger_unavailable`: a shared credit ledger failed or timed out; the client's error is `cause`.
 * - `store_locked`: an embedded store folder is held by another live process (`holderPid`).
 * - `invalid_signature`: a webhook's signature, timestamp or headers did not verify (`verifyWebhook`).
 * - `unsupported`: the store lacks a capability the call needs (writes, usage statistics); `field` is `store`.
 */
export type KeygateErrorCode =
  | 'invalid_input'
  | 'key_not_found'
  | 'key_revoked'
  | 'key_conflict'
  | 'key_in_use'
  | 'key_store_unavailable'
  | 'rate_limiter_unavailable'
  | 'credit_ledger_unavailable'
  | 'store_locked'
  | 'invalid_signature'
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

/** `text` with anything shaped like a key cut out (see `redactKeys`); undefined stays undefined. */
function redacted<T extends string | undefined>(text: T): T {
  return (text === undefined ? text : redactKeys(text)) as T;
}

/**
 * Base class of every error keygate throws. No string it carries holds a raw key: the message,
 * `field`, `keyId` and `state` pass through `redactKeys` here (a subclass passes its own strings,
 * such as `path`, through it too), so `util.inspect`, `JSON.stringify` and a logged stack print none. What a caller needs to act on
 * (`field`, `keyId`, `state`) is a property.
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
    super(redactKeys(message), details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.field = redacted(details.field);
    this.keyId = redacted(details.keyId);
    this.state = redacted(details.state);
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
 * - `unknown_option`: a member no options object or input of that call has (a misspelt
 *   `permisions`); the message names the nearest known member when one is within two edits.
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
  | 'unknown_option'
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
    // Each issue's strings are redacted like the error's own: an issue names what the user typed.
    const issues = details.issues ?? [{ field, reason: details.reason ?? 'invalid', message }];
    this.issues = issues.map((i) => ({ ...i, field: redactKeys(i.field), message: redactKeys(i.message) }));
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
    this.lastUsedAt = redactKeys(lastUsedAt);
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
 * A shared credit ledger failed or did not answer in time. `cause` holds the client's own error.
 *
 * @example
 * throw new CreditLedgerUnavailableError('redis: connection refused', err);
 */
export class CreditLedgerUnavailableError extends KeygateError {
  constructor(message: string, cause?: unknown) {
    super('credit_ledger_unavailable', message, { cause });
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
    this.path = redactKeys(path);
    this.holderPid = holderPid;
  }
}

/**
 * The store lacks a capability the call needs: `KeyManager.usage` on a store that keeps no usage
 * statistics, or a write or usage call through a `CachedKeyStore` whose wrapped store cannot do it.
 * Nothing was written; `field` is `'store'`. A store refused when it is given to a constructor is an
 * `InvalidInputError` instead.
 *
 * @example
 * await new KeyManager({ store: storeWithoutUsage }).usage(id); // throws UnsupportedError, field 'store'
 */
export class UnsupportedError extends KeygateError {
  constructor(field: string, message: string) {
    super('unsupported', message, { field });
  }
}

/**
 * A webhook did not verify (`verifyWebhook` in `keygate/webhooks`): a header missing, a timestamp
 * outside the tolerance, no signature matching the body, or a body that is not an event. `reason`
 * says which; nothing of the secret or the expected signature is in the error.
 *
 * @example
 * try { await verifyWebhook({ secret, headers, body }); } catch (err) { if (err instanceof InvalidSignatureError) return new Response(null, { status: 400 }); }
 */
export class InvalidSignatureError extends KeygateError {
  /** Which check failed: `missing_header`, `stale_timestamp`, `bad_signature` or `bad_body`. */
  readonly reason: 'missing_header' | 'stale_timestamp' | 'bad_signature' | 'bad_body';
  constructor(reason: InvalidSignatureError['reason'], message: string) {
    super('invalid_signature', message);
    this.reason = reason;
  }
}
