import { withDeadline } from '../deadline.js';
import { emitSafely, type KeygateEvent, type KeygateEventType } from '../events.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import type { PublicKey } from '../types.js';
import type { HoldResult } from '../vocabulary/credit-ledger.js';
import { DENIALS, type DenialCode } from '../vocabulary/denials.js';
import { requestCost } from '../vocabulary/request-cost.js';
import type { AuthFailure, AuthRequest, AuthResult, AuthSuccess } from '../vocabulary/result.js';
import type { ResolvedCredits } from './options.js';

// Check row 10: a live key's request that passed rows 1 to 9 holds its cost from its account. A test
// key, a denial and a free request are returned as they came; only a hold makes the path async.

function failure(code: DenialCode, key: PublicKey): AuthFailure {
  const d = DENIALS[code];
  return { ok: false, status: d.status, code, message: d.detail, key };
}

/**
 * Emits a credits event about `key`'s account through `c.onEvent`; never throws.
 *
 * @example
 * creditEvent(c, 'credits.ledger_failed', key, { operation: 'hold', served: false });
 */
export function creditEvent(
  c: ResolvedCredits,
  type: KeygateEventType,
  key: PublicKey,
  fields: Partial<KeygateEvent>,
): void {
  if (!c.onEvent) return;
  const at = new Date().toISOString();
  emitSafely(c.onEvent, { type, keyId: key.id, accountId: key.accountId, hint: key.hint, at, ...fields });
}

// Accounts refused for want of credits, per ledger: `credits.exhausted` fires once per account and
// process until a hold of that account succeeds again. Bounded: the oldest account is forgotten first.
const EXHAUSTED_MAX = 10_000;
const exhaustedBy = new WeakMap<object, Set<string>>();

function exhausted(c: ResolvedCredits, key: PublicKey, balance: number): void {
  let accounts = exhaustedBy.get(c.ledger);
  if (!accounts) {
    accounts = new Set();
    exhaustedBy.set(c.ledger, accounts);
  }
  if (accounts.has(key.accountId)) return;
  if (accounts.size >= EXHAUSTED_MAX) accounts.delete(accounts.values().next().value as string);
  accounts.add(key.accountId);
  creditEvent(c, 'credits.exhausted', key, { balance });
}

// The account's threshold, or -1 when it has none (a function that throws or answers garbage: none).
function thresholdOf(c: ResolvedCredits, accountId: string): number {
  let t: unknown = c.lowBalance;
  try {
    if (typeof t === 'function') t = t(accountId);
  } catch {
    return -1;
  }
  return typeof t === 'number' && Number.isSafeInteger(t) && t >= 0 ? t : -1;
}

function held(result: AuthSuccess, c: ResolvedCredits, t: Telemetry | undefined, cost: number, h: HoldResult) {
  const key = result.key;
  if (typeof h?.ok !== 'boolean' || typeof h.balance !== 'number' || (h.ok && typeof h.holdId !== 'string')) {
    throw new TypeError('the ledger answered something that is not a HoldResult');
  }
  if (!h.ok) {
    t?.credits('refused', key.accountId);
    exhausted(c, key, h.balance);
    return failure('insufficient_credits', key);
  }
  t?.credits('hold', key.accountId);
  exhaustedBy.get(c.ledger)?.delete(key.accountId);
  // The hold is atomic, so only the one hold that crossed the threshold sees before >= it > after.
  const threshold = c.lowBalance === undefined ? -1 : thresholdOf(c, key.accountId);
  if (h.balance < threshold && h.balance + cost >= threshold) {
    creditEvent(c, 'credits.low', key, { balance: h.balance, threshold });
  }
  // Built field by field: on Node 20's V8, a spread followed by a new field costs about a microsecond
  // (the copy gets a map of its own), twenty times this.
  const credits = { holdId: h.holdId, cost, balance: h.balance };
  const { rateLimit } = result;
  return (
    rateLimit === undefined
      ? { ok: true, status: 200, key, credits }
      : { ok: true, status: 200, key, rateLimit, credits }
  ) satisfies AuthSuccess;
}

function ledgerFailed(result: AuthSuccess, c: ResolvedCredits, t: Telemetry | undefined): AuthResult {
  const served = c.onLedgerError === 'allow';
  t?.credits('error', result.key.accountId, 'hold');
  creditEvent(c, 'credits.ledger_failed', result.key, { operation: 'hold', served });
  return served ? result : failure('credit_ledger_unavailable', result.key);
}

// What the guard rejects with does not matter: every failure of the hold reads the same.
const GUARD_ERRORS = { timedOut: () => 0, failed: () => 0 };

/**
 * Row 10 for one result: the result itself unless it is an allow of a live key whose request costs
 * something; then the allow carrying `credits` (the hold), 402 `insufficient_credits`, 500
 * `invalid_credit_cost` (the cost function failed; nothing held), or, when the ledger fails or
 * times out, 503 `credit_ledger_unavailable` (the allow itself with `onLedgerError: 'allow'`). Never rejects.
 *
 * @example
 * const charged = await holdCredits(result, request, o.credits, o.telemetry);
 */
export function holdCredits(
  result: AuthResult,
  request: AuthRequest,
  c: ResolvedCredits,
  t: Telemetry | undefined,
): AuthResult | Promise<AuthResult> {
  if (!result.ok || result.key.mode === 'test') return result;
  const cost = requestCost(c.cost, request);
  if (cost < 0) return failure('invalid_credit_cost', result.key);
  if (cost === 0) return result;
  const options = c.holdTtlMs === undefined ? { keyId: result.key.id } : { keyId: result.key.id, ttlMs: c.holdTtlMs };
  if (c.now) {
    // A ledger that answers at once (memory, a leased slice that covers the cost) keeps a cached
    // request free of promises.
    try {
      const h = c.now.holdNow(result.key.accountId, cost, options);
      if (h !== undefined) return held(result, c, t, cost, h);
    } catch {
      return ledgerFailed(result, c, t);
    }
  }
  const hold = () => c.ledger.hold(result.key.accountId, cost, options);
  let pending: Promise<HoldResult>;
  try {
    // A ledger without a deadline of its own is bounded by the authentication timeout.
    pending = c.guardMs > 0 ? withDeadline(c.guardMs, hold, GUARD_ERRORS) : Promise.resolve(hold());
  } catch {
    return ledgerFailed(result, c, t);
  }
  return pending.then(
    (h) => {
      try {
        return held(result, c, t, cost, h);
      } catch {
        return ledgerFailed(result, c, t);
      }
    },
    () => ledgerFailed(result, c, t),
  );
}

/**
 * {@link holdCredits} after rows 1 to 9, whether they were decided at once or by a promise.
 *
 * @example
 * if (o.credits) result = withCredits(result, request, o.credits, o.telemetry);
 */
export function withCredits(
  result: AuthResult | Promise<AuthResult>,
  request: AuthRequest,
  c: ResolvedCredits,
  t: Telemetry | undefined,
): AuthResult | Promise<AuthResult> {
  return 'then' in result ? result.then((r) => holdCredits(r, request, c, t)) : holdCredits(result, request, c, t);
}
