import { verified } from '../../../verified';

export const dynamic = 'force-dynamic';

export async function GET(request: Request): Promise<Response> {
  if (!(await verified(request))) return new Response('unverified', { status: 500 });
  return Response.json({ ok: true, service: 'email-verification' });
}
