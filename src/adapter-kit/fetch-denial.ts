import type { AuthFailure } from 'keygate';
import type { DenialResponder, DenialResponse } from './problem.js';

/**
 * The Fetch `Response` for a denial: the same status, headers and bytes every adapter sends.
 *
 * @example
 * return denialResponse(respond(result));
 */
export function denialResponse(denial: DenialResponse): Response {
  // A copy of the headers: some Response implementations (@hono/node-server's) add Content-Length to the init object.
  return new Response(denial.body, { status: denial.status, headers: { ...denial.headers } });
}

/**
 * Builds the denial step of a Fetch-style adapter (a hook answers with a `Response`). Without a hook
 * it answers with the standard denial at once; with one, it sends the hook's `Response`, and the
 * standard denial when the hook throws, rejects or returns anything else: a hook can change how a
 * denial looks, never turn it into an allow.
 *
 * @example
 * const deny = createFetchDenier(respond, options.onDenied);
 * if (!result.ok) return deny(result, request, env);
 */
export function createFetchDenier<Args extends unknown[]>(
  respond: DenialResponder,
  onDenied?: (failure: AuthFailure, ...args: Args) => Response | PromiseLike<Response>,
): (failure: AuthFailure, ...args: Args) => Response | Promise<Response> {
  const standard = (failure: AuthFailure, ..._args: unknown[]): Response => denialResponse(respond(failure));
  if (!onDenied) return standard;
  return async function denyWithHook(failure, ...args) {
    try {
      const custom = await onDenied(failure, ...args);
      if (custom instanceof Response) return custom;
    } catch {
      // fall through to the standard denial
    }
    return standard(failure);
  };
}
