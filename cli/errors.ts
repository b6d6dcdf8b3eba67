import { KeygateError, type KeygateErrorCode, KeyStoreUnavailableError } from 'keygate';
import { redactKeys } from 'keygate/store-kit';
import { maskUserinfo } from './store-url.js';

/**
 * The exit code of each error code: the one table the CLI's exit status comes from (README and
 * `--help` print it). 0 is success.
 */
export const EXIT_CODES = {
  invalid_input: 1,
  unsupported: 1,
  store_locked: 1,
  invalid_signature: 1,
  key_not_found: 2,
  key_revoked: 3,
  key_conflict: 3,
  key_in_use: 3,
  key_store_unavailable: 4,
  rate_limiter_unavailable: 4,
  credit_ledger_unavailable: 4,
} as const satisfies Record<KeygateErrorCode, number>;

/**
 * The exit code of `keygate credits reconcile` when the account's entries do not add up to its
 * balance plus its open holds: the command ran, and its answer is a failure.
 */
export const RECONCILE_MISMATCH_EXIT = 5;

/**
 * The exit code of `keygate doctor` when one of its findings has severity `error`: the checks ran,
 * and their answer is that something must be fixed. Warnings alone exit 0.
 */
export const DOCTOR_ERROR_EXIT = 6;

/** What each exit code means, for `--help` (a code missing here does not compile). */
export const EXIT_MEANINGS: Record<
  0 | (typeof EXIT_CODES)[KeygateErrorCode] | typeof RECONCILE_MISMATCH_EXIT | typeof DOCTOR_ERROR_EXIT,
  string
> = {
  0: 'done',
  1: 'refused as given (fix the command or the store; nothing changed)',
  2: 'no key with that id',
  3: "the key's state forbids it now",
  4: 'the store failed or timed out; try again',
  5: "the account's credit entries do not add up to its balance plus its open holds (credits reconcile)",
  6: 'a check found something to fix, a finding of severity error (doctor)',
};

// Codes no command of the CLI can meet (only a webhook receiver's `verifyWebhook` throws
// `invalid_signature`): mapped above so that the table stays complete, not listed in --help.
const NOT_FROM_THE_CLI = new Set<string>(['invalid_signature']);

/**
 * The exit-code table as lines: `1  invalid_input, unsupported, store_locked: refused as given ...`.
 *
 * @example
 * exitCodeLines()[0] // '0  done'
 */
export function exitCodeLines(): string[] {
  return Object.entries(EXIT_MEANINGS).map(([exit, meaning]) => {
    const codes = Object.entries(EXIT_CODES).filter(
      ([code, value]) => String(value) === exit && !NOT_FROM_THE_CLI.has(code),
    );
    return `  ${exit}  ${codes.length ? `${codes.map(([code]) => code).join(', ')}: ` : ''}${meaning}`;
  });
}

// Anything shaped like an API key is cut to its prefix, and a bare random part cut out: the only raw
// key the CLI prints is the `secret` of create and rotate, never one echoed back from input (an id, a
// flag value) or from a driver's message. A URL's password is masked, wherever the URL came from.
// Newlines go too, so that an error is one line.
const scrub = (text: string) => maskUserinfo(redactKeys(text)).replace(/\s*\n\s*/g, ' ');

/**
 * Any failure as a `KeygateError`: keygate's own pass through; anything else came from a store's
 * client (a refused connection, a driver error) and becomes `key_store_unavailable` with it as `cause`.
 *
 * @example
 * toKeygateError(new Error('connect ECONNREFUSED')).code // 'key_store_unavailable'
 */
export function toKeygateError(err: unknown): KeygateError {
  if (err instanceof KeygateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new KeyStoreUnavailableError(`the store failed: ${message}`, err);
}

/**
 * The `--json` form of an error: `{ "error": { "code", "message", "field"?, "keyId"?, ... } }`,
 * with the extra facts an error carries (`state`, `holderPid`, `lastUsedAt`) when present.
 *
 * @example
 * errorJson(new KeyNotFoundError('key_1')) // { error: { code: 'key_not_found', message: ..., field: 'id', keyId: 'key_1' } }
 */
export function errorJson(err: KeygateError): { error: Record<string, unknown> } {
  const extra = err as KeygateError & { holderPid?: number; lastUsedAt?: string };
  const error: Record<string, unknown> = { code: err.code, message: scrub(err.message) };
  const facts = { field: err.field, keyId: err.keyId, state: err.state };
  for (const [name, value] of Object.entries(facts)) if (value !== undefined) error[name] = scrub(value);
  if (extra.holderPid !== undefined) error.holderPid = extra.holderPid;
  if (extra.lastUsedAt !== undefined) error.lastUsedAt = extra.lastUsedAt;
  return { error };
}

/**
 * Prints a failure on stderr (one line: `keygate: <message>`, or one JSON value with `--json`) and
 * returns its exit code from {@link EXIT_CODES}.
 *
 * @example
 * return reportError(err, { json: true, err: (line) => process.stderr.write(`${line}\n`) });
 */
export function reportError(thrown: unknown, out: { json: boolean; err(text: string): void }): number {
  const err = toKeygateError(thrown);
  out.err(out.json ? JSON.stringify(errorJson(err)) : `keygate: ${scrub(err.message)}`);
  return EXIT_CODES[err.code] ?? 1;
}
