import type { AuditAction } from './vocabulary/audit-log.js';
import type { DenialCode } from './vocabulary/denials.js';

/**
 * What a report of a leaked key does to it (`keygate/leaks`): nothing but an event and an audit entry
 * (`notify`), or `KeyManager.suspend`, `rotate` or `revoke`.
 *
 * @example
 * const action: LeakAction = 'suspend';
 */
export type LeakAction = 'notify' | 'suspend' | 'rotate' | 'revoke';

/** The kinds of event keygate reports through `onEvent`. */
export type KeygateEventType =
  | 'key.created'
  | 'key.updated'
  | 'key.rotated'
  | 'key.revoked'
  | 'key.suspended'
  | 'key.resumed'
  | 'key.leaked'
  | 'auth.denied'
  | 'usage.spike'
  | 'key.rotation_due'
  | 'ratelimit.degraded'
  | 'credits.low'
  | 'credits.exhausted'
  | 'credits.ledger_failed'
  | 'audit.failed'
  | 'webhook.endpoint_disabled';

/**
 * Something that happened to a key. Never carries a secret or a digest: ids, account, hint and time,
 * plus what the type needs (`code` and `ip` for `auth.denied`, rates for `usage.spike`, ...).
 */
export interface KeygateEvent {
  readonly type: KeygateEventType;
  /** Null for denials of requests whose key is unknown or malformed. */
  readonly keyId: string | null;
  readonly accountId: string | null;
  readonly hint: string | null;
  /** ISO-8601. */
  readonly at: string;
  readonly code?: DenialCode;
  readonly ip?: string | null;
  /** For `key.rotated`: the successor's id. */
  readonly newKeyId?: string;
  /** For `key.created`: `true` when the key was brought in by `KeyManager.import` rather than generated. */
  readonly imported?: boolean;
  /** For `key.suspended`: the reason given, or `null` when none was. */
  readonly reason?: string | null;
  /** For `usage.spike`: requests in the last full minute and the key's usual rate per minute. */
  readonly lastMinute?: number;
  readonly baselinePerMinute?: number;
  /** For `key.rotation_due`: age in whole days. */
  readonly ageDays?: number;
  /** For `ratelimit.degraded`: the failing shared limiter (its class name, e.g. `RedisRateLimiter`). */
  readonly limiter?: string;
  /**
   * For `credits.low`: the account's available balance just after the hold that crossed the
   * threshold; for `credits.exhausted`: the balance that could not cover the request.
   */
  readonly balance?: number;
  /** For `credits.low`: the account's `lowBalance` threshold. */
  readonly threshold?: number;
  /** For `credits.ledger_failed`: the ledger call that failed or timed out. */
  readonly operation?: 'hold' | 'settle' | 'release';
  /**
   * For `credits.ledger_failed`: whether the request was served anyway (`onLedgerError: 'allow'`, or
   * a settle or release after the handler had answered; that hold lapses by itself).
   */
  readonly served?: boolean;
  /**
   * For `audit.failed`: the action whose audit entry could not be written (the key write itself
   * succeeded), and the error's `code` (e.g. `key_store_unavailable`) in `errorCode`. For
   * `key.leaked`: what the report did to the key (`suspend`, `rotate`, `revoke`), or `notify` when it
   * changed nothing (the policy said so, or an earlier report had already taken the key out of service).
   */
  readonly action?: AuditAction | LeakAction;
  readonly errorCode?: string;
  /** For `webhook.endpoint_disabled`: the endpoint disabled after failing without a break. */
  readonly endpointId?: string;
  /**
   * For `key.leaked`: where the key was found (GitHub's URL of the commit, issue, gist...); the key itself
   * is never carried. For `webhook.endpoint_disabled`: the endpoint's URL.
   */
  readonly url?: string;
  /** For `key.leaked`: the kind of place GitHub found it in (`content`, `commit`, `issue_comment`, ...), or `unknown`. */
  readonly source?: string;
}

/** A host's event listener. Its failures (thrown or rejected) are swallowed. */
export type EventHook = (event: KeygateEvent) => void | Promise<void>;

/**
 * Calls `hook` with `event`, isolating its failures: an event hook can never break a request or a write.
 *
 * @example
 * emitSafely(onEvent, { type: 'key.revoked', keyId, accountId, hint, at: new Date().toISOString() });
 */
export function emitSafely(hook: EventHook | undefined, event: KeygateEvent): void {
  if (!hook) return;
  try {
    const pending = hook(event);
    if (pending && typeof (pending as Promise<void>).catch === 'function') (pending as Promise<void>).catch(() => {});
  } catch {
    // The hook's failure is the host's to log; it never changes an outcome.
  }
}
