import type { InputIssueReason } from '#errors';
import { InvalidInputError } from '#errors';
import { describeValue } from '../redact/describe.js';
import { validAccountId } from '../validate/fields.js';
import { checkOptionNames } from '../validate/options.js';
import { textIssue } from '../validate/text.js';
import { validWholeNumber } from '../validate/whole.js';
import type { HoldOptions } from '../vocabulary/credit-ledger.js';
import { checkCreditAmount } from './amount.js';

// The arguments of every `CreditLedger` method, checked as every keygate ledger checks them, before
// anything is written. Each refusal is an `InvalidInputError` naming the argument or option.

/**
 * How long a hold lives unless settled or released, in milliseconds: 10 minutes.
 *
 * @example
 * await ledger.hold('acct_1', 3); // lapses DEFAULT_HOLD_TTL_MS (600,000 ms) from now unless closed first
 */
export const DEFAULT_HOLD_TTL_MS = 600_000;

// The longest hold, in milliseconds: 24 hours.
const MAX_HOLD_TTL_MS = 86_400_000;

/**
 * The deadline of one call of a shared ledger (PostgreSQL, Redis), in milliseconds: 1,000.
 *
 * @example
 * this.timeoutMs = options.timeoutMs ?? DEFAULT_LEDGER_TIMEOUT_MS;
 */
export const DEFAULT_LEDGER_TIMEOUT_MS = 1_000;

// How many entries `entries` returns without a `limit`: 100; at most 1,000.
const DEFAULT_ENTRIES_LIMIT = 100;
const MAX_ENTRIES_LIMIT = 1_000;

const REFERENCE_MAX = 200;
const KEY_ID_MAX = 512;
const HOLD_ID_MAX = 256;

function refuse(field: string, reason: InputIssueReason, message: string): never {
  throw new InvalidInputError(field, message, { reason });
}

function text(field: string, value: unknown, max: number): string {
  const problem = textIssue(field, value, max);
  if (problem) refuse(problem.field, problem.reason, problem.message);
  return value as string;
}

// The options object: absent, or a plain object with only the named members (a misspelt `ttl` is
// refused, "did you mean `ttlMs`?"). Walks the names without allocating: `hold` runs per request.
function optionsOf(value: unknown, allowed: readonly string[], where: string): Record<string, unknown> {
  if (value === undefined) return NO_OPTIONS;
  checkOptionNames(value, allowed, where);
  return value as Record<string, unknown>;
}

// Never written to: read only for its (absent) members.
const NO_OPTIONS: Readonly<Record<string, unknown>> = {};
const TOP_UP_OPTIONS = ['reference'];
const HOLD_OPTIONS = ['keyId', 'ttlMs'];
const ENTRIES_OPTIONS = ['limit'];

/**
 * An account id as the ledger keeps it: the key records' rule (1-200 characters once trimmed, no
 * control or bidirectional-override character), trimmed.
 *
 * @example
 * validCreditAccount(' acct_1 ') // 'acct_1'
 */
export function validCreditAccount(accountId: unknown): string {
  return validAccountId(accountId);
}

/**
 * The checked arguments of `topUp`.
 *
 * @example
 * const { accountId, amount, reference } = validTopUpArgs('acct_1', 500, { reference: 'pi_1' });
 */
export interface TopUpArgs {
  readonly accountId: string;
  readonly amount: number;
  readonly reference: string | undefined;
}

/**
 * Checks `topUp(accountId, amount, options)`: `amount` a safe integer >= 1, `reference` a string of
 * 1-200 characters. For authors of ledgers over other backends.
 *
 * @example
 * const args = validTopUpArgs(accountId, amount, options);
 */
export function validTopUpArgs(accountId: unknown, amount: unknown, options?: unknown): TopUpArgs {
  const account = validCreditAccount(accountId);
  const credits = checkCreditAmount(amount, 1);
  const { reference } = optionsOf(options, TOP_UP_OPTIONS, 'CreditLedger.topUp');
  return {
    accountId: account,
    amount: credits,
    reference: reference === undefined ? undefined : text('reference', reference, REFERENCE_MAX),
  };
}

/**
 * The checked arguments of `hold`, with the default ttl applied.
 *
 * @example
 * const { accountId, amount, keyId, ttlMs } = validHoldArgs('acct_1', 3, { keyId: 'key_1' }); // ttlMs 600000
 */
export interface HoldArgs {
  readonly accountId: string;
  readonly amount: number;
  readonly keyId: string | undefined;
  /** Whole milliseconds, 1 to 24 hours; default 10 minutes. */
  readonly ttlMs: number;
}

/**
 * Checks `hold(accountId, amount, options)`: `amount` a safe integer >= 1, `keyId` a string of 1-512
 * characters, `ttlMs` a whole number of milliseconds from 1 to 86,400,000 (default 600,000). For
 * authors of ledgers over other backends.
 *
 * @example
 * const args = validHoldArgs(accountId, amount, options);
 */
export function validHoldArgs(accountId: unknown, amount: unknown, options?: unknown): HoldArgs {
  const account = checkHoldArgs(accountId, amount, options);
  const o = (options ?? NO_OPTIONS) as HoldOptions;
  return {
    accountId: account,
    amount: amount as number,
    keyId: o.keyId,
    ttlMs: o.ttlMs ?? DEFAULT_HOLD_TTL_MS,
  };
}

/**
 * The checks of {@link validHoldArgs} without building its answer, for the paths that answer a hold
 * at once (`MemoryCreditLedger`'s `holdSync`, `LeasedCreditLedger.holdNow`): they refuse what `hold`
 * refuses (a negative, fractional, NaN or unsafe amount, a bad `keyId` or `ttlMs`, an unknown
 * option), allocating nothing for good arguments. Returns the account id as the ledger keeps it.
 *
 * @example
 * const account = checkHoldArgs(accountId, amount, options); // then hold `amount` for `account`
 */
export function checkHoldArgs(accountId: unknown, amount: unknown, options?: unknown): string {
  const account = validCreditAccount(accountId);
  checkCreditAmount(amount, 1);
  if (options !== undefined) {
    const { keyId, ttlMs } = optionsOf(options, HOLD_OPTIONS, 'CreditLedger.hold');
    if (keyId !== undefined) text('keyId', keyId, KEY_ID_MAX);
    if (ttlMs !== undefined) validWholeNumber('ttlMs', ttlMs, 1, MAX_HOLD_TTL_MS);
  }
  return account;
}

/**
 * Checks a hold id (`settle`, `release`): a non-empty string of at most 256 characters. An id no hold
 * has is not an error (the call changes nothing); a value that cannot be an id is.
 *
 * @example
 * validHoldId('hold_1') // 'hold_1'
 */
export function validHoldId(holdId: unknown): string {
  if (typeof holdId !== 'string')
    refuse('holdId', 'wrong_type', `holdId must be a string, got ${describeValue(holdId)}`);
  if (holdId === '') refuse('holdId', 'empty', 'holdId must be a non-empty string');
  if (holdId.length > HOLD_ID_MAX) refuse('holdId', 'too_long', `holdId is longer than ${HOLD_ID_MAX} characters`);
  return holdId;
}

/**
 * Checks `settle(holdId, amount)`: `amount` absent (the whole hold) or a safe integer >= 0. Whether it
 * is more than the hold holds is the ledger's to check (`amountOverHold`).
 *
 * @example
 * const { holdId, amount } = validSettleArgs('hold_1', 2);
 */
export function validSettleArgs(holdId: unknown, amount?: unknown): { holdId: string; amount: number | undefined } {
  checkSettleArgs(holdId, amount);
  return { holdId: holdId as string, amount: amount as number | undefined };
}

/**
 * The checks of {@link validSettleArgs} without building its answer, for the paths that settle at
 * once (`MemoryCreditLedger`'s `settleSync`): a settle of a negative amount never adds credits.
 *
 * @example
 * checkSettleArgs(holdId, amount); // throws InvalidInputError naming holdId or amount
 */
export function checkSettleArgs(holdId: unknown, amount?: unknown): void {
  validHoldId(holdId);
  if (amount !== undefined) checkCreditAmount(amount, 0);
}

/**
 * Checks `entries(accountId, options)`: `limit` a whole number from 1 to 1,000 (default 100).
 *
 * @example
 * const { accountId, limit } = validEntriesArgs('acct_1', { limit: 20 });
 */
export function validEntriesArgs(accountId: unknown, options?: unknown): { accountId: string; limit: number } {
  const account = validCreditAccount(accountId);
  const { limit } = optionsOf(options, ENTRIES_OPTIONS, 'CreditLedger.entries');
  return {
    accountId: account,
    limit: limit === undefined ? DEFAULT_ENTRIES_LIMIT : validWholeNumber('limit', limit, 1, MAX_ENTRIES_LIMIT),
  };
}
