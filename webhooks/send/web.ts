import type { SendArgs } from './types.js';

/**
 * Where there is no Node (Workers, browsers' workers, ...): the URL's host was checked, but the
 * addresses a name resolves to cannot be (the Fetch API does not say where it connects). Cloudflare
 * Workers' `fetch` does not reach private networks; elsewhere, use Node's path.
 */
export const checksResolvedAddresses = false;

/**
 * POSTs with the Fetch API, following no redirect. Resolves to the status; the body is never read.
 *
 * @example
 * const status = await sendWebhook({ url: new URL('https://hooks.example.com/'), headers, body, signal, allowPrivateNetworks: false, resolve: undefined });
 */
export async function sendWebhook(args: SendArgs): Promise<number> {
  const response = await globalThis.fetch(args.url.href, {
    method: 'POST',
    headers: args.headers,
    body: args.body,
    redirect: 'manual',
    signal: args.signal,
  });
  // An unread body must not hold the connection.
  await response.body?.cancel().catch(() => {});
  return response.status;
}
