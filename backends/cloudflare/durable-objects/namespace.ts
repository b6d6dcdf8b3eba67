import { InvalidInputError } from 'keygate';
import type { DurableObjectNamespaceLike } from './workers-types.js';

/**
 * `namespace` when it looks like a Durable Object namespace binding; else `InvalidInputError` naming it.
 *
 * @example
 * validNamespace(env.KEYGATE_LIMITS)
 */
export function validNamespace(namespace: unknown): DurableObjectNamespaceLike {
  const n = namespace as Partial<DurableObjectNamespaceLike> | undefined;
  if (!n || typeof n.idFromName !== 'function' || typeof n.get !== 'function') {
    throw new InvalidInputError('namespace', 'namespace must be a Durable Object namespace binding (env.NAME)');
  }
  return n as DurableObjectNamespaceLike;
}
