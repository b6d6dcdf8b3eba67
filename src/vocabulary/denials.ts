/** Why a request was refused. Every adapter sends the same status, title and code for each. */
export type DenialCode =
  | 'missing_api_key'
  | 'malformed_api_key'
  | 'key_store_unavailable'
  | 'invalid_api_key'
  | 'revoked_api_key'
  | 'expired_api_key'
  | 'key_suspended'
  | 'ip_not_allowed'
  | 'insufficient_permissions'
  | 'rate_limited'
  | 'rate_limiter_unavailable'
  | 'insufficient_credits'
  | 'credit_ledger_unavailable'
  | 'too_many_failed_attempts'
  | 'invalid_credit_cost';

/**
 * Status and human text of each denial, in check order.
 *
 * @example
 * DENIALS.ip_not_allowed.status // 403
 */
export const DENIALS: Readonly<
  Record<
    DenialCode,
    { readonly status: 401 | 402 | 403 | 429 | 500 | 503; readonly title: string; readonly detail: string }
  >
> = {
  missing_api_key: { status: 401, title: 'Missing API key', detail: 'The request carries no API key.' },
  malformed_api_key: {
    status: 401,
    title: 'Malformed API key',
    detail: 'The API key is not in the expected format (prefix, mode, length, characters or checksum).',
  },
  key_store_unavailable: {
    status: 503,
    title: 'Key store unavailable',
    detail: 'The API key could not be checked right now. Retry later.',
  },
  invalid_api_key: { status: 401, title: 'Invalid API key', detail: 'The API key is not recognised.' },
  revoked_api_key: { status: 401, title: 'Revoked API key', detail: 'The API key has been revoked.' },
  expired_api_key: { status: 401, title: 'Expired API key', detail: 'The API key has expired.' },
  key_suspended: {
    status: 403,
    title: 'Suspended API key',
    detail: 'The API key is suspended. Contact the account owner.',
  },
  ip_not_allowed: {
    status: 403,
    title: 'Address not allowed',
    detail: "The client address is not in the API key's allow list.",
  },
  insufficient_permissions: {
    status: 403,
    title: 'Insufficient permissions',
    detail: 'The API key lacks a permission this operation requires.',
  },
  // Only with the `rateLimit` option, for a key that passed every check above.
  rate_limited: {
    status: 429,
    title: 'Rate limit exceeded',
    detail: 'The API key has used up its rate limit for the current window. Retry after the time given.',
  },
  rate_limiter_unavailable: {
    status: 503,
    title: 'Rate limiter unavailable',
    detail: "The API key's rate limit could not be checked right now. Retry later.",
  },
  // Only with the `credits` option, for a live key that passed every check above.
  insufficient_credits: {
    status: 402,
    title: 'Insufficient credits',
    detail: "The account's credit balance does not cover this request. Top up the account and retry.",
  },
  credit_ledger_unavailable: {
    status: 503,
    title: 'Credit ledger unavailable',
    detail: "The account's credit balance could not be checked right now. Retry later.",
  },
  // Only with the `throttle` option; checked before everything else.
  too_many_failed_attempts: {
    status: 429,
    title: 'Too many failed attempts',
    detail: 'Too many requests from this address failed authentication. Retry after the time given.',
  },
  // Only with the `credits` option: the route's `cost` function failed, a fault of the server, not the client.
  invalid_credit_cost: {
    status: 500,
    title: 'Invalid credit cost',
    detail: "The request's cost in credits could not be computed; nothing was charged.",
  },
};
