import { resolveAuthOptions } from '../auth/authenticate.js';
import { DENIALS, type DenialCode } from '../auth/denials.js';
import type { AuthFailure } from '../auth/result.js';
import { InvalidInputError } from '../errors.js';

/** An HTTP answer to a refused request, in framework-neutral parts. Every adapter writes these bytes. */
export interface DenialResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** RFC 9457 problem details: `{ type, title, status, detail, code }` as JSON text. */
  readonly body: string;
}

/** Options of {@link createDenialResponder}. */
export interface DenialResponderOptions {
  /** Header the key travels in, named in `WWW-Authenticate`. Default `'x-api-key'`. */
  header?: string;
  /** Seconds a client should wait after a 503, sent as `Retry-After`. Default `5`. */
  retryAfter?: number;
}

/**
 * Builds the function adapters use to answer denials: RFC 9457 problem+json with the code from the
 * check-order table, `WWW-Authenticate` naming the key header on 401, `Retry-After` on 503 and on
 * 429 (the failure's own `retryAfter`), and `Cache-Control: no-store`. Responses are built once per
 * code (and per `Retry-After` value for 429) and reused.
 *
 * @example
 * const respond = createDenialResponder({ header: 'x-api-key' });
 * const { status, headers, body } = respond(result); // result: an AuthFailure
 */
export function createDenialResponder(
  options: DenialResponderOptions = {},
): (failure: Pick<AuthFailure, 'code' | 'retryAfter'>) => DenialResponse {
  const header = resolveAuthOptions({ header: options.header ?? 'x-api-key' }).header;
  const retryAfter = options.retryAfter ?? 5;
  if (!Number.isInteger(retryAfter) || retryAfter < 0) {
    throw new InvalidInputError(
      'retryAfter',
      `retryAfter must be a whole number of seconds >= 0, got ${String(retryAfter)}`,
    );
  }
  const built = new Map<DenialCode, DenialResponse>();
  for (const code of Object.keys(DENIALS) as DenialCode[]) {
    const d = DENIALS[code];
    const headers: Record<string, string> = {
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
    };
    if (d.status === 401) headers['www-authenticate'] = `ApiKey header="${header}"`;
    if (d.status === 503) headers['retry-after'] = String(retryAfter);
    const body = JSON.stringify({
      type: `urn:keygate:problem:${code}`,
      title: d.title,
      status: d.status,
      detail: d.detail,
      code,
    });
    built.set(code, Object.freeze({ status: d.status, headers: Object.freeze(headers), body }));
  }
  // 429s differ only in their Retry-After; a few hundred distinct values at most (window / 1 s).
  const throttled = new Map<number, DenialResponse>();
  function tooMany(seconds: number | undefined): DenialResponse {
    const wait = Number.isInteger(seconds) && (seconds as number) > 0 ? (seconds as number) : 1;
    let denial = throttled.get(wait);
    if (denial === undefined) {
      const base = built.get('too_many_failed_attempts') as DenialResponse;
      denial = Object.freeze({ ...base, headers: Object.freeze({ ...base.headers, 'retry-after': String(wait) }) });
      if (throttled.size >= 1000) throttled.clear();
      throttled.set(wait, denial);
    }
    return denial;
  }
  return (failure) =>
    failure.code === 'too_many_failed_attempts'
      ? tooMany(failure.retryAfter)
      : (built.get(failure.code) ?? (built.get('key_store_unavailable') as DenialResponse));
}
