/**
 * Awaits `promise` and returns what it rejected with; throws when it resolved instead. Lets a test
 * match the error with `toMatchObject` or read its `cause`.
 *
 * @example
 * const err = await rejection(limiter.consume('', { limit: 1, windowMs: 1000 }, 1));
 * expect(err).toMatchObject({ code: 'invalid_input', field: 'keyId' });
 */
export async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}
