import type { RateLimitState } from '../vocabulary/rate-limiter.js';
import { type RateLimitHeaderFields, rateLimitHeaders } from './headers.js';

export type { RateLimitHeaderFields } from './headers.js';

/**
 * The `RateLimit-Policy` and `RateLimit` header fields for a limited key's result
 * (`result.rateLimit`), by lower-case name: what every adapter adds to the handler's response on
 * success (the denials of `createDenialResponder` carry them already).
 *
 * @example
 * if (result.ok && result.rateLimit) res.set(rateLimitHeaderFields(result.rateLimit)); // Express
 */
export function rateLimitHeaderFields(state: RateLimitState): RateLimitHeaderFields {
  return rateLimitHeaders(state);
}

/**
 * `response` with the rate-limit header fields set. A response whose headers cannot change (one
 * from `fetch()`, `Response.redirect()`) is copied first, so a handler may return any `Response`.
 *
 * @example
 * const response = await handler(request, result.key);
 * return result.rateLimit ? withRateLimitHeaders(response, rateLimitHeaderFields(result.rateLimit)) : response;
 */
export function withRateLimitHeaders(response: Response, fields: RateLimitHeaderFields): Response {
  try {
    setAll(response.headers, fields);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    setAll(copy.headers, fields);
    return copy;
  }
}

function setAll(headers: Headers, fields: RateLimitHeaderFields): void {
  headers.set('ratelimit-policy', fields['ratelimit-policy']);
  headers.set('ratelimit', fields.ratelimit);
}
