// The client address the Node bridges resolved with the host framework's trust-proxy rules, kept
// beside the Request they built (a header would be forgeable; a WeakMap entry goes with the Request).
const addresses = new WeakMap<Request, string>();

/** Remembers the client address of a Request built by a Node bridge. */
export function rememberClientAddress(request: Request, address: string | undefined): void {
  if (address) addresses.set(request, address);
}

/** The client address a Node bridge resolved for `request`, if it built it. */
export function nodeClientAddress(request: Request): string | undefined {
  return addresses.get(request);
}
