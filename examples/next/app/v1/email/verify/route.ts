// A route handler behind the middleware: the key's public view arrives in a signed request header.
import { apiKeyFromHeaders } from 'keygate/next';

export async function POST(request: Request): Promise<Response> {
  const key = await apiKeyFromHeaders(request.headers, { secret: process.env.KEYGATE_NEXT_SECRET ?? '' });
  // Only when the middleware did not run here (a matcher that misses this path): refuse, never serve.
  if (!key) return Response.json({ error: 'no verified API key' }, { status: 401 });
  const { email = '' } = (await request.json().catch(() => ({}))) as { email?: string };
  return Response.json({
    email,
    valid_syntax: /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email),
    mode: key.mode,
    account: key.accountId,
  });
}
