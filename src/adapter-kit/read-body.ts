// Reading a Fetch request's body under a size limit, for the handlers keygate ships (the dashboard's
// forms, keygate/leaks' reports): no more than the limit is ever buffered, whatever Content-Length claims.

/**
 * The bytes of `request`'s body, or null as soon as they pass `maxBytes` (or Content-Length says they
 * will); the rest of the stream is cancelled. An absent body is empty.
 *
 * @example
 * const body = await readCapped(request, 64 * 1024);
 * if (body === null) return new Response(null, { status: 413 });
 */
export async function readCapped(request: Request, maxBytes: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) return null;
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}
