/**
 * A client address as a resolver returns it: a string, or nothing when it is not known.
 *
 * @example
 * const fromSocket = (req: IncomingMessage): ClientAddress => req.socket.remoteAddress;
 */
export type ClientAddress = string | null | undefined;

/**
 * Tells whether a value is a promise (any thenable), so an adapter can carry on in the same tick
 * when it is not.
 *
 * @example
 * const result = authenticateEager(request, store, auth);
 * if (isPromise(result)) result.then(finish); else finish(result);
 */
export function isPromise<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * Calls the user's `clientIp` resolver and never fails: a resolver that is absent, throws or rejects
 * gives an unknown address (keys with an allow list are then refused with 403). The answer is
 * returned as is when the resolver answered synchronously, so a cached key still costs no promise.
 *
 * @example
 * const ip = readAddress(options.clientIp, c);
 * return isPromise(ip) ? ip.then((address) => check(c, address)) : check(c, ip);
 */
export function readAddress<Args extends unknown[]>(
  resolve: ((...args: Args) => ClientAddress | PromiseLike<ClientAddress>) | undefined,
  ...args: Args
): ClientAddress | Promise<ClientAddress> {
  if (!resolve) return undefined;
  try {
    const ip = resolve(...args);
    return isPromise(ip) ? Promise.resolve(ip).then(undefined, () => undefined) : ip;
  } catch {
    return undefined;
  }
}
