import { verified } from '../../../verified';

export const dynamic = 'force-dynamic';

export async function POST(request: Request): Promise<Response> {
  if (!(await verified(request))) return new Response('unverified', { status: 500 });
  const body = (await request.json()) as { email?: string };
  return Response.json({ email: body.email ?? null, valid_syntax: /^[^@\s]+@[^@\s]+$/.test(body.email ?? '') });
}
