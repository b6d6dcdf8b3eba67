import { type AuthFailure, DENIALS, type DenialCode, InvalidInputError, type KeySource } from 'keygate';
import { resolveAuthOptions } from '../auth/authenticate.js';
import { rateLimitHeaders, retryAfterSeconds } from '../rate-limit/headers.js';

/** An HTTP answer to a refused request, in framework-neutral parts. Every adapter writes these bytes. */
export interface DenialResponse {
  /** The HTTP status: 401, 403, 429 or 503. */
  readonly status: number;
  /** Lower-case header names and their values, ready for any framework's writer. */
  readonly headers: Readonly<Record<string, string>>;
  /** RFC 9457 problem details: `{ type, title, status, detail, code }` as JSON text. */
  readonly body: string;
}

/**
 * Answers one failure with its {@link DenialResponse}; made by {@link createDenialResponder}.
 *
 * @example
 * const respond: DenialResponder = createDenialResponder();
 */
export type DenialResponder = (
  failure: Pick<AuthFailure, 'code' | 'retryAfterSeconds' | 'rateLimit'>,
) => DenialResponse;

/**
 * Options of {@link createDenialResponder}.
 *
 * @example
 * const options: DenialResponderOptions = { header: 'x-api-key', retryAfterMs: 10_000 };
 */
export interface DenialResponderOptions {
  /** Header the key travels in, named in `WWW-Authenticate`. @default 'x-api-key' */
  header?: string;
  /**
   * Where the key is read, as `authenticate`'s `from`: decides the 401's challenges, `ApiKey
   * header="<header>"` for `'header'`, `Bearer` for `'bearer'`, both for `'either'`. @default 'header'
   */
  from?: KeySource;
  /**
   * Milliseconds a client should wait after a 503, sent as `Retry-After` in whole seconds (rounded
   * up, at least 1). @default 5000
   */
  retryAfterMs?: number;
}

// `Retry-After` seconds for the 503 wait, refusing a wait that is not a number of milliseconds >= 0.
function checkedRetryAfter(retryAfterMs: number): number {
  if (typeof retryAfterMs !== 'number' || !Number.isFinite(retryAfterMs) || retryAfterMs < 0) {
    throw new InvalidInputError(
      'retryAfterMs',
      `retryAfterMs must be a number of milliseconds >= 0, got ${typeof retryAfterMs === 'number' ? retryAfterMs : typeof retryAfterMs}`,
    );
  }
  return retryAfterSeconds(retryAfterMs);
}

// The 401's challenges (RFC 9110 11.6.1): the ones a client can answer, given where the key is read.
function challengesFor(header: string, from: KeySource): string {
  const apiKey = `ApiKey header="${header}"`;
  return from === 'bearer' ? 'Bearer' : from === 'either' ? `${apiKey}, Bearer` : apiKey;
}

function build(code: DenialCode, challenges: string, retryAfter: string): DenialResponse {
  const d = DENIALS[code];
  const headers: Record<string, string> = {
    'content-type': 'application/problem+json',
    'cache-control': 'no-store',
  };
  if (d.status === 401) headers['www-authenticate'] = challenges;
  if (d.status === 503) headers['retry-after'] = retryAfter;
  // A 429 always says when to come back; the failure's own wait replaces this floor (see below).
  if (d.status === 429) headers['retry-after'] = '1';
  const body = JSON.stringify({
    type: `urn:keygate:problem:${code}`,
    title: d.title,
    status: d.status,
    detail: d.detail,
    code,
  });
  return Object.freeze({ status: d.status, headers: Object.freeze(headers), body });
}

// Denials differ per request only in a few header values: kept by those values, a bounded few.
function memo(cache: Map<string, DenialResponse>, key: string, make: () => DenialResponse): DenialResponse {
  let denial = cache.get(key);
  if (denial === undefined) {
    denial = make();
    if (cache.size >= 1000) cache.clear();
    cache.set(key, denial);
  }
  return denial;
}

function withHeaders(base: DenialResponse, extra: Record<string, string>): DenialResponse {
  return Object.freeze({ ...base, headers: Object.freeze({ ...base.headers, ...extra }) });
}

/**
 * Builds the function adapters use to answer denials: RFC 9457 problem+json with the code from the
 * check-order table, `WWW-Authenticate` on 401 naming the key header (and `Bearer` when `from` reads it), `Retry-After` on 503 and on
 * 429 (the failure's own `retryAfterSeconds`, or for `rate_limited` the time until its window
 * resets), the `RateLimit-Policy` and `RateLimit` fields for a failure that carries `rateLimit`, and
 * `Cache-Control: no-store`. Responses are built once per code (and per header values for 429) and
 * reused. Bad options throw `InvalidInputError` naming the option.
 *
 * @example
 * const respond = createDenialResponder({ header: 'x-api-key', retryAfterMs: 10_000 });
 * const { status, headers, body } = respond(result); // result: an AuthFailure
 */
export function createDenialResponder(options: DenialResponderOptions = {}): DenialResponder {
  const { header, from } = resolveAuthOptions({
    header: options.header ?? 'x-api-key',
    from: options.from ?? 'header',
  });
  const challenges = challengesFor(header, from);
  const retryAfter = String(checkedRetryAfter(options.retryAfterMs ?? 5000));
  const built = new Map<DenialCode, DenialResponse>();
  for (const code of Object.keys(DENIALS) as DenialCode[]) built.set(code, build(code, challenges, retryAfter));
  const base = (code: DenialCode) => built.get(code) ?? (built.get('key_store_unavailable') as DenialResponse);
  // 429s differ only in their Retry-After; a few hundred distinct values at most (window / 1 s).
  const throttled = new Map<string, DenialResponse>();
  function tooMany(seconds: number | undefined): DenialResponse {
    const wait = Number.isInteger(seconds) && (seconds as number) > 0 ? (seconds as number) : 1;
    return memo(throttled, String(wait), () =>
      withHeaders(base('too_many_failed_attempts'), { 'retry-after': String(wait) }),
    );
  }
  // A limited key's denials add its rate-limit fields (and, for 429, the seconds until its window resets).
  const limited = new Map<string, DenialResponse>();
  function withLimit(failure: Parameters<DenialResponder>[0], state: NonNullable<AuthFailure['rateLimit']>) {
    const fields: Record<string, string> = { ...rateLimitHeaders(state) };
    if (failure.code === 'rate_limited') fields['retry-after'] = String(retryAfterSeconds(state.resetMs));
    const key = `${failure.code} ${fields['ratelimit-policy']} ${fields.ratelimit} ${fields['retry-after']}`;
    return memo(limited, key, () => withHeaders(base(failure.code), fields));
  }
  return (failure) => {
    if (failure.rateLimit) return withLimit(failure, failure.rateLimit);
    return failure.code === 'too_many_failed_attempts' ? tooMany(failure.retryAfterSeconds) : base(failure.code);
  };
}
