import type { PublicKey } from '../types.js';
import type { HeldCredits } from './credit-ledger.js';
import type { DenialCode } from './denials.js';
import type { RateLimitState } from './rate-limiter.js';

// The values authenticate() takes and returns, in a module of their own so that the modules that build
// results (compiled-key) and the one that decides them (authenticate) do not import each other.

/**
 * Request headers as the core accepts them: a Fetch `Headers` or a Node-style record.
 *
 * @example
 * const headers: HeaderSource = { 'x-api-key': 'mk_test_…' };
 */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | number | undefined>>;

/** What `authenticate` needs of a request. Adapters build it from their framework's request. */
export interface AuthRequest {
  headers: HeaderSource;
  /** The client address as the adapter resolved it (framework trust-proxy rules applied), or undefined. */
  ip?: string | undefined | null;
}

/** A request that passed every check. */
export interface AuthSuccess {
  readonly ok: true;
  readonly status: 200;
  readonly key: PublicKey;
  /** With the `rateLimit` option, for a limited key: where its limit stands after this request. */
  readonly rateLimit?: RateLimitState;
  /** With the `credits` option, for a live key whose request costs something: the hold its caller settles or releases. */
  readonly credits?: HeldCredits;
}

/** A refused request: `status` and `code` from the check-order table; `key` once the key is known. */
export interface AuthFailure {
  readonly ok: false;
  readonly status: 401 | 402 | 403 | 429 | 500 | 503;
  readonly code: DenialCode;
  readonly message: string;
  readonly key?: PublicKey;
  /** For 429 `too_many_failed_attempts`: seconds until the client may try again (sent as `Retry-After`). */
  readonly retryAfterSeconds?: number;
  /** For 429 `rate_limited` (with the `rateLimit` option): where the key's limit stands; `Retry-After` comes from `resetMs`. */
  readonly rateLimit?: RateLimitState;
}

/** The outcome of {@link authenticate}. */
export type AuthResult = AuthSuccess | AuthFailure;
