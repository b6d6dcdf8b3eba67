import { readCapped } from 'keygate/adapter-kit';

/** Largest form body read, in bytes: far above any form of the dashboard, far below a memory problem. */
export const MAX_FORM_BYTES = 64 * 1024;

/**
 * The posted `application/x-www-form-urlencoded` body of `request`, or null when it is of another
 * type or longer than {@link MAX_FORM_BYTES} (read no further than that).
 */
export async function readForm(request: Request): Promise<URLSearchParams | null> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return null;
  const bytes = await readCapped(request, MAX_FORM_BYTES);
  return bytes === null ? null : new URLSearchParams(new TextDecoder().decode(bytes));
}
