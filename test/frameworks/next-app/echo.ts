import { apiKeyFromHeaders, SIGNED_KEY_HEADER } from 'keygate/next';
import fixture from './keygate-fixture.json';

/** What every route of the app answers: the verified key (or null) and whether a signed header arrived at all. */
export async function echo(request: Request): Promise<Response> {
  const key = await apiKeyFromHeaders(request.headers, { secret: fixture.secret });
  return Response.json({
    keyId: key?.id ?? null,
    accountId: key?.accountId ?? null,
    signedHeader: request.headers.has(SIGNED_KEY_HEADER),
    method: request.method,
    body: request.method === 'POST' ? await request.json() : null,
  });
}
