import { apiKeyFromHeaders } from 'keygate/next';

/** Behind keygate, the route reads the signed view as a real route would; otherwise it reads nothing. */
export async function verified(request: Request): Promise<boolean> {
  if (process.env.BENCH_GATE !== 'keygate') return true;
  return (await apiKeyFromHeaders(request.headers, { secret: process.env.BENCH_SIGNING_SECRET ?? '' })) !== null;
}
