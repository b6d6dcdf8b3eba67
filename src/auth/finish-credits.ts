import type { ResolvedCredits } from '../credits/options.js';
import { creditEvent, holdCredits as hold } from '../credits/step.js';
import { withDeadline } from '../deadline.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import type { AuthRequest, AuthResult, AuthSuccess } from '../vocabulary/result.js';
import type { AuthenticateOptions } from './options.js';
import { resolveAuthOptions } from './options.js';

const NO_ERRORS = { timedOut: () => 0, failed: () => 0 };
const DONE = Promise.resolve();

/**
 * Closes the hold of a successful result once the request has been answered: a `status` below 500
 * settles the whole cost (the work was done, whether or not the client stayed to read it); 500 and
 * above releases it. Pass 500 for a handler that threw (and for a 404 no route served:
 * `statusToBill` of `keygate/adapter-kit`). Never rejects and never throws: a ledger
 * failure is counted in telemetry (`keygate.credits.operations`, `error`) and emitted as
 * `credits.ledger_failed`, and the hold then lapses by itself. A settle that finds its hold lapsed
 * (`charged: 0`) counts as a `lapse`. A result without `credits` (a test key, a free request) does
 * nothing. `options` are the ones the result was authenticated with.
 *
 * @example
 * const result = await authenticate(request, store, auth);
 * const response = await handler(request);
 * if (result.ok) await finishCredits(result, response.status, auth);
 */
export function finishCredits(result: AuthSuccess, status: number, options: AuthenticateOptions): Promise<void> {
  const held = result.credits;
  const { credits: c, telemetry: t } = resolveAuthOptions(options);
  if (!held || !c) return DONE;
  const settle = status < 500;
  const operation = settle ? 'settle' : 'release';
  if (c.now) {
    // A ledger that answers at once (memory, a hold taken from a leased slice): closed before this
    // returns, with no promise of its own.
    let answer: unknown;
    try {
      answer = settle ? c.now.settleNow(held.holdId) : c.now.releaseNow(held.holdId);
    } catch {
      failed(c, t, result, operation);
      return DONE;
    }
    if (answer !== undefined) {
      closed(t, result, held.cost, operation, answer);
      return DONE;
    }
  }
  const close = () => (settle ? c.ledger.settle(held.holdId) : c.ledger.release(held.holdId));
  // A ledger without a deadline of its own is bounded by the authentication timeout; `then` turns a throw into a rejection.
  const closing = c.guardMs > 0 ? withDeadline(c.guardMs, close, NO_ERRORS) : Promise.resolve().then(close);
  return closing.then(
    (answer) => closed(t, result, held.cost, operation, answer),
    () => failed(c, t, result, operation),
  );
}

// Counts a closed hold: a settle that charged nothing for a hold that cost something found it lapsed.
function closed(
  t: Telemetry | undefined,
  result: AuthSuccess,
  cost: number,
  operation: 'settle' | 'release',
  answer: unknown,
): void {
  if (!t) return;
  const lapsed = operation === 'settle' && (answer as { charged?: unknown } | undefined)?.charged === 0 && cost > 0;
  t.credits(lapsed ? 'lapse' : operation, result.key.accountId);
}

function failed(c: ResolvedCredits, t: Telemetry | undefined, result: AuthSuccess, operation: 'settle' | 'release') {
  t?.credits('error', result.key.accountId, operation);
  creditEvent(c, 'credits.ledger_failed', result.key, { operation, served: true });
}

/**
 * Check row 10 alone, for an adapter that authenticates before the body is parsed and holds after
 * (Fastify's `preHandler`): holds the cost of a successful result with `options.credits`, exactly as
 * `authenticate` would have. Returns the result with its `credits`, or the 402, 500 or 503 denial;
 * any other result (a denial, no `credits` option, a test key, cost 0) as it came. Never rejects.
 *
 * @example
 * const held = holdCredits(result, { headers, ip, native: request }, auth);
 */
export function holdCredits(
  result: AuthResult,
  request: AuthRequest,
  options: AuthenticateOptions,
): AuthResult | Promise<AuthResult> {
  const o = resolveAuthOptions(options);
  return o.credits ? hold(result, request, o.credits, o.telemetry) : result;
}
