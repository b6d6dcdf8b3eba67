import { InvalidInputError } from '#errors';
import type { EventHook } from '../events.js';
import { quote } from '../redact/describe.js';
import { checkOptionNames } from '../validate/options.js';
import { capabilityOf, type ImmediateLedger } from '../vocabulary/capabilities.js';
import type { CreditLedger } from '../vocabulary/credit-ledger.js';
import type { AuthRequest } from '../vocabulary/result.js';

/**
 * The `credits` option of `authenticate` and of every adapter: prepaid billing (check row 10). A
 * request of a live key that passed every other check holds `cost` credits of its account; an account
 * that cannot cover it gets 402 `insufficient_credits`. A `mk_test_` key never touches the ledger.
 * `Request` is what a `cost` function receives: the `AuthRequest` for `authenticate`, the adapter's
 * `AdapterRequest` (with the framework's own request as `native`) in an adapter.
 *
 * @example
 * const credits: CreditOptions = {
 *   ledger: new PostgresCreditLedger({ client: pool }),
 *   lowBalance: 100,
 *   onEvent: (event) => console.warn(event.type, event.accountId, event.balance),
 * };
 * const result = await authenticate({ headers, ip }, store, { credits });
 * if (result.ok && result.credits) await credits.ledger.settle(result.credits.holdId);
 */
export interface CreditOptions<Request = AuthRequest> {
  /** Keeps the balances: `MemoryCreditLedger` (one process), `PostgresCreditLedger`, `RedisCreditLedger`, or your own. */
  ledger: CreditLedger;
  /**
   * Credits one request costs: a whole number >= 0, or a function of the request that returns one (a
   * batch route: the batch size). `0` is free: the ledger is not called. Called only for a live key
   * that passed every other check. A function that throws or returns anything else makes that
   * request a 500 `invalid_credit_cost`, with nothing held.
   *
   * @default 1
   */
  cost?: number | ((request: Request) => number);
  /**
   * Milliseconds a hold lives unless settled or released; then it lapses and its credits return
   * (a whole number from 1 to 86,400,000).
   *
   * @default undefined (the ledger's own default, 10 minutes)
   */
  holdTtlMs?: number;
  /**
   * The available balance below which an account is low: a hold that takes it from this or more to
   * below it emits `credits.low` (once per crossing, across processes). A whole number >= 0, or a
   * function of the account id returning one (a function that throws or returns anything else: no event).
   *
   * @default undefined (no `credits.low`)
   */
  lowBalance?: number | ((accountId: string) => number);
  /**
   * What a request gets while the ledger fails or times out: `'deny'` answers 503
   * `credit_ledger_unavailable` (live traffic is never served unbilled); `'allow'` serves it without
   * a hold, counts it in telemetry and emits `credits.ledger_failed`.
   *
   * @default 'deny'
   */
  onLedgerError?: 'deny' | 'allow';
  /**
   * Receives `credits.low`, `credits.exhausted` and `credits.ledger_failed`. Its failures never affect a request.
   *
   * @default undefined
   */
  onEvent?: EventHook;
}

/**
 * The `credits` option after validation, with defaults filled in. `resolveAuthOptions` resolves it.
 *
 * @example
 * const { credits } = resolveAuthOptions({ credits: { ledger } });
 * credits?.onLedgerError; // 'deny'
 */
export interface ResolvedCredits {
  readonly ledger: CreditLedger;
  readonly cost: number | ((request: AuthRequest) => number);
  readonly holdTtlMs: number | undefined;
  readonly lowBalance: number | ((accountId: string) => number) | undefined;
  readonly onLedgerError: 'deny' | 'allow';
  readonly onEvent: EventHook | undefined;
  /** Milliseconds after which a ledger call with no `deadline` of its own counts as failed; 0: none. */
  readonly guardMs: number;
  /**
   * What answers at once: the ledger's `synchronous` capability (a `MemoryCreditLedger`, always) or its
   * `immediateCredits` (a `LeasedCreditLedger`, from its slices); undefined: only the ledger's promises.
   */
  readonly now: ImmediateLedger | undefined;
}

// A ledger that always answers at once is one that answers at once whenever it can.
function immediate(ledger: CreditLedger): ImmediateLedger | undefined {
  const sync = capabilityOf(ledger, 'synchronous');
  if (!sync) return capabilityOf(ledger, 'immediateCredits');
  return {
    holdNow: (accountId, amount, options) => sync.holdSync(accountId, amount, options),
    settleNow: (holdId) => sync.settleSync(holdId),
    releaseNow: (holdId) => sync.releaseSync(holdId),
  };
}

const FIELDS = ['ledger', 'cost', 'holdTtlMs', 'lowBalance', 'onLedgerError', 'onEvent'];
const METHODS = ['hold', 'settle', 'release'] as const;
// The longest hold a ledger takes, in milliseconds: 24 hours.
const MAX_HOLD_TTL_MS = 86_400_000;

function refuse(member: string, message: string): never {
  throw new InvalidInputError(`credits.${member}`, `credits.${member} ${message}`);
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/**
 * Validates the `credits` option once; throws `InvalidInputError` naming the member at fault
 * (`credits.ledger`, `credits.cost`, `credits.holdTtlMs`, ...). `timeoutMs` is the authentication
 * timeout, which also bounds a ledger that declares no `deadline` capability of its own.
 *
 * @example
 * resolveCredits({ ledger: new MemoryCreditLedger(), cost: 2 }, 2000);
 */
export function resolveCredits(value: unknown, timeoutMs: number): ResolvedCredits | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError('credits', 'credits must be an object { ledger, cost?, ... } or null');
  }
  const o = value as Partial<CreditOptions>;
  checkOptionNames(o, FIELDS, 'credits', 'credits');
  const { ledger, cost = 1, holdTtlMs, lowBalance, onLedgerError = 'deny', onEvent } = o;
  if (!METHODS.every((m) => typeof ledger?.[m] === 'function')) {
    refuse('ledger', 'must be a CreditLedger (hold, settle and release), e.g. a MemoryCreditLedger');
  }
  if (typeof cost !== 'function' && !isCount(cost)) {
    refuse('cost', `must be a whole number >= 0 or a function of the request, got ${quote(cost)}`);
  }
  if (holdTtlMs !== undefined && !(isCount(holdTtlMs) && holdTtlMs >= 1 && holdTtlMs <= MAX_HOLD_TTL_MS)) {
    refuse('holdTtlMs', `must be a whole number of milliseconds from 1 to ${MAX_HOLD_TTL_MS}, got ${quote(holdTtlMs)}`);
  }
  if (lowBalance !== undefined && typeof lowBalance !== 'function' && !isCount(lowBalance)) {
    refuse('lowBalance', `must be a whole number >= 0 or a function of the account id, got ${quote(lowBalance)}`);
  }
  if (onLedgerError !== 'deny' && onLedgerError !== 'allow') {
    refuse('onLedgerError', `must be "deny" or "allow", got ${quote(onLedgerError)}`);
  }
  if (onEvent !== undefined && typeof onEvent !== 'function') refuse('onEvent', 'must be a function');
  // A ledger that declares a `deadline` no later than the authentication timeout (keygate's shared
  // ledgers do) needs no second timer; any other is guarded by that timeout, as limiters are.
  const own = capabilityOf(ledger, 'deadline')?.timeoutMs;
  const guardMs = typeof own === 'number' && own > 0 && (timeoutMs === 0 || own <= timeoutMs) ? 0 : timeoutMs;
  return {
    ledger: ledger as CreditLedger,
    cost: cost as ResolvedCredits['cost'],
    holdTtlMs,
    lowBalance,
    onLedgerError,
    onEvent,
    guardMs,
    now: immediate(ledger as CreditLedger),
  };
}
