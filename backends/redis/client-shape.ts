import { type InputIssueReason, InvalidInputError } from 'keygate';

/**
 * Checks that the client option `value` has every method in `methods` (keygate types Redis clients
 * structurally, so this is what tells a wrong object from a client). Anything else throws
 * `InvalidInputError` naming `field`: "`field` must be `what`", with `reason` when given.
 *
 * @example
 * requireMethods(options?.client, ['sendCommand'], 'client', 'a node-redis client (createClient() from "redis")');
 */
export function requireMethods(
  value: unknown,
  methods: readonly string[],
  field: string,
  what: string,
  reason?: InputIssueReason,
): void {
  const given = value as Record<string, unknown> | null | undefined;
  if (!given || methods.some((method) => typeof given[method] !== 'function')) {
    throw new InvalidInputError(field, `${field} must be ${what}`, reason === undefined ? {} : { reason });
  }
}
