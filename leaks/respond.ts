// The answers of the secret scanning endpoint that are not GitHub's feedback: RFC 9457 problem details.

/**
 * Why a report was refused, as the `code` of its problem details (status in brackets):
 * `method_not_allowed` (405), `invalid_signature` (401), `payload_too_large` (413), `invalid_payload`
 * (400), `public_keys_unavailable` (503), `key_store_unavailable` (503), `report_failed` (500).
 *
 * @example
 * const code: LeakProblemCode = 'invalid_signature';
 */
export type LeakProblemCode =
  | 'method_not_allowed'
  | 'invalid_signature'
  | 'payload_too_large'
  | 'invalid_payload'
  | 'public_keys_unavailable'
  | 'key_store_unavailable'
  | 'report_failed';

const TITLES: Record<LeakProblemCode, readonly [number, string]> = {
  method_not_allowed: [405, 'Method not allowed'],
  invalid_signature: [401, 'Invalid signature'],
  payload_too_large: [413, 'Payload too large'],
  invalid_payload: [400, 'Invalid payload'],
  public_keys_unavailable: [503, "GitHub's public keys unavailable"],
  key_store_unavailable: [503, 'Key store unavailable'],
  report_failed: [500, 'Report failed'],
};

/** A problem+json response: `{ type, title, status, detail, code }`, never with a token in it. */
export function problem(code: LeakProblemCode, detail: string): Response {
  const [status, title] = TITLES[code];
  const headers: Record<string, string> = { 'content-type': 'application/problem+json', 'cache-control': 'no-store' };
  if (status === 405) headers.allow = 'POST';
  if (status === 503) headers['retry-after'] = '30';
  const body = JSON.stringify({ type: `urn:keygate:problem:${code}`, title, status, detail, code });
  return new Response(body, { status, headers });
}

/** GitHub's feedback: a 200 with the JSON array of labels. */
export function feedbackResponse(feedback: readonly unknown[]): Response {
  return new Response(JSON.stringify(feedback), {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  });
}
