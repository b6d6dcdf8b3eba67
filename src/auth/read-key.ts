import type { HeaderSource } from '../vocabulary/result.js';
import { readHeader, SEVERAL_VALUES } from './read-header.js';

/**
 * Where `authenticate` reads the key: the key header (`'header'`), `Authorization: Bearer <key>`
 * (`'bearer'`), or whichever of the two the request carries (`'either'`).
 *
 * @example
 * const from: KeySource = 'either'; // authenticate(request, store, { from })
 */
export type KeySource = 'header' | 'bearer' | 'either';

// RFC 9110: the scheme is case-insensitive and 1*SP separates it from the credentials, here one token
// with no space, tab or comma in it (a comma would start a second challenge). No match: another
// scheme; a match without a token: a Bearer field that holds no single key.
const BEARER = /^bearer(?:$| +([^ \t,]+)$| )/i;

// The token of an `Authorization` value (as `readHeader` returns it): null for a Bearer field that
// holds no single key, `other` for another scheme.
function bearerOf(value: string | undefined | null, other: undefined | null): string | undefined | null {
  if (typeof value !== 'string') return value;
  const match = BEARER.exec(value);
  return match === null ? other : (match[1] ?? SEVERAL_VALUES);
}

/**
 * The key a request carries, read from where `from` says (see {@link KeySource}), with the rules of
 * `readHeader`: `undefined` when there is none, `null` when what is there cannot be one key (for
 * Bearer: another scheme, no token, several tokens or fields). With `'either'`, the same key in both
 * places is that key and two different keys are `null`; an `Authorization` field of another scheme
 * (a proxy's `Basic` credentials, say) is passed over when the key header holds a value.
 *
 * @example
 * readKey({ authorization: 'Bearer mk_test_...' }, 'x-api-key', 'bearer') // 'mk_test_...'
 * readKey({ 'x-api-key': a, authorization: `Bearer ${b}` }, 'x-api-key', 'either') // null (two keys)
 */
export function readKey(
  headers: HeaderSource | null | undefined,
  header: string,
  from: KeySource,
): string | undefined | null {
  if (from === 'header') return readHeader(headers, header);
  const authorization = readHeader(headers, 'authorization');
  if (from === 'bearer') return bearerOf(authorization, SEVERAL_VALUES);
  const own = readHeader(headers, header);
  const bearer = bearerOf(authorization, own === undefined ? SEVERAL_VALUES : undefined);
  if (own === undefined) return bearer;
  return bearer === undefined || bearer === own ? own : SEVERAL_VALUES;
}
