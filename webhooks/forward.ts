import { InvalidInputError } from '#errors';
import type { KeygateEvent } from '../src/events.js';
import type { OutboxEvent } from '../src/types.js';
import { checkOptionNames } from '../src/validate/options.js';
import type { Outbox } from '../src/vocabulary/outbox.js';
import type { AuthResult } from '../src/vocabulary/result.js';

const OPTION_NAMES = ['types', 'clock', 'onError'] as const;

/** The in-process events {@link outboxEvents} forwards by default: none a key write already stores. */
const FORWARDED: readonly string[] = ['credits.low', 'credits.exhausted', 'key.leaked'];
// Keys remembered as over their limit; past this, the ones whose window has ended are forgotten.
const PRUNE_AT = 1_000;
const NOTHING: Promise<null> = Promise.resolve(null);

/**
 * Options of {@link outboxEvents}.
 *
 * @example
 * const options: OutboxEventsOptions = { types: ['credits.low'], onError: (err) => report(err) };
 */
export interface OutboxEventsOptions {
  /** The `onEvent` types forwarded. @default ['credits.low', 'credits.exhausted', 'key.leaked'] */
  types?: readonly string[];
  /** Now, in epoch milliseconds. @default Date.now */
  clock?: () => number;
  /** Receives a failed publish (the request or write that raised the event is never affected). @default undefined (swallowed) */
  onError?: (err: unknown) => void;
}

/**
 * Hooks that hand keygate's in-process events to the outbox. See {@link outboxEvents}.
 *
 * @example
 * const events = outboxEvents(outbox);
 * authenticate({ store, rateLimit, credits: { ledger, onEvent: events.onEvent }, onResult: events.onResult });
 */
export interface OutboxEventHooks {
  /** An `onEvent` hook (authenticate's `credits`, keygate/leaks'...): publishes the forwarded types. */
  onEvent(event: KeygateEvent): Promise<OutboxEvent | null>;
  /** An `onResult` hook: publishes `ratelimit.exceeded` for a key's first 429 `rate_limited` of each window. */
  onResult(result: AuthResult): Promise<OutboxEvent | null>;
}

/**
 * Forwards what keygate raises in process to `outbox`, so that it reaches the accounts' webhooks:
 *
 * - `onEvent`: `credits.low`, `credits.exhausted` and `key.leaked` (the `types` option), with the
 *   event's fields as `data` (never a secret: the outbox scrubs). Key lifecycle events are not
 *   forwarded: the key write already stored them.
 * - `onResult`: `ratelimit.exceeded`, data `{ keyId, hint, limit, windowMs, resetAt }`, once per key
 *   per window: the first 429 `rate_limited` publishes, the others until the window's reset do not
 *   (remembered in this process: each process sends at most one per key per window).
 *
 * Events without an account are skipped; each hook resolves to the event stored, or null.
 *
 * @example
 * const events = outboxEvents(capabilityOf(store, 'outbox')!);
 * const auth = authenticate({ store, rateLimit: { limiter, default: { limit: 100, windowMs: 60_000 } }, onResult: events.onResult });
 * const leaks = githubSecretScanning({ manager: keys, onEvent: events.onEvent }); // keygate/leaks
 */
export function outboxEvents(outbox: Outbox, options: OutboxEventsOptions = {}): OutboxEventHooks {
  checkOptionNames(options, OPTION_NAMES, 'outboxEvents');
  if (typeof outbox?.publish !== 'function') throw new InvalidInputError('outbox', 'outbox must be an Outbox');
  const types = new Set(options.types ?? FORWARDED);
  const clock = options.clock ?? Date.now;
  // keyId -> when its current window ends (epoch ms), for the keys already reported over their limit.
  const limited = new Map<string, number>();

  async function publish(input: Parameters<Outbox['publish']>[0]): Promise<OutboxEvent | null> {
    try {
      return await outbox.publish(input);
    } catch (err) {
      options.onError?.(err);
      return null;
    }
  }

  return {
    onEvent(event) {
      if (!event || !types.has(event.type) || !event.accountId) return NOTHING;
      return publish(event);
    },
    // Called for every request: everything but a key's first 429 of a window answers at once, allocating nothing.
    onResult(result) {
      if (result?.ok !== false || result.code !== 'rate_limited' || !result.key || !result.rateLimit) return NOTHING;
      const nowMs = clock();
      const { key, rateLimit } = result;
      if ((limited.get(key.id) ?? 0) > nowMs) return NOTHING;
      if (limited.size >= PRUNE_AT) for (const [id, until] of limited) if (until <= nowMs) limited.delete(id);
      const resetAtMs = nowMs + rateLimit.resetMs;
      limited.set(key.id, resetAtMs);
      return publish({
        type: 'ratelimit.exceeded',
        accountId: key.accountId,
        at: new Date(nowMs).toISOString(),
        data: {
          keyId: key.id,
          hint: key.hint,
          limit: rateLimit.limit,
          windowMs: rateLimit.windowMs,
          resetAt: new Date(resetAtMs).toISOString(),
        },
      });
    },
  };
}
