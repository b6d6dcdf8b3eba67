/**
 * Calls `attempt` until it answers (anything but `undefined`), pausing `every` ms between calls, for
 * at most `within` ms; returns the answer, or `undefined` when none came in time. For waiting until a
 * backend is reachable again after a test cut its connection (a failed attempt should answer undefined).
 *
 * @example
 * const answer = await pollUntil(() => limiter.consume(key, policy, 0).catch(() => undefined));
 * expect(answer?.remaining).toBeLessThanOrEqual(4);
 */
export async function pollUntil<T>(
  attempt: () => Promise<T | undefined>,
  { within = 10_000, every = 100 }: { within?: number; every?: number } = {},
): Promise<T | undefined> {
  let answer = await attempt();
  for (const deadline = Date.now() + within; answer === undefined && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, every));
    answer = await attempt();
  }
  return answer;
}
