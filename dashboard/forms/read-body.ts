/** Largest form body read, in bytes: far above any form of the dashboard, far below a memory problem. */
export const MAX_FORM_BYTES = 64 * 1024;

/**
 * The posted `application/x-www-form-urlencoded` body of `request`, or null when it is of another
 * type or longer than {@link MAX_FORM_BYTES} (read no further than that).
 */
export async function readForm(request: Request): Promise<URLSearchParams | null> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return null;
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > MAX_FORM_BYTES || !request.body) return declared > MAX_FORM_BYTES ? null : new URLSearchParams();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_FORM_BYTES) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new URLSearchParams(new TextDecoder().decode(bytes));
}
