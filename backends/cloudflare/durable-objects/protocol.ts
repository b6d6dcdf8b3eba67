// How a client and its object talk: one POST per call, `{ args }` in, `{ value }` or `{ error }` out.
import { type InputIssueReason, InvalidInputError, KeygateError } from 'keygate';
import type { DurableObjectIdLike, DurableObjectNamespaceLike } from './workers-types.js';

/** The answer body: a value, or a refusal (`invalid_input`, status 200) or a failure (status 503). */
type Answer = { value: unknown } | { error: { code: string; message: string; field?: string; reason?: string } };

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * Answers one call inside an object: `method`'s value as `{ value }` (200); an `InvalidInputError` as
 * `{ error }` with its field (200), so that the client throws it again; anything else as `{ error }`
 * with status 503, which the client turns into its backend's unavailable error. An unknown method is 404.
 *
 * @example
 * fetch(request) { return answerCall(request, { consume: (keyId, limit, cost) => limiter.consume(keyId, limit, cost) }); }
 */
export async function answerCall(
  request: Request,
  methods: Record<string, (...args: never[]) => Promise<unknown>>,
): Promise<Response> {
  const name = new URL(request.url).pathname.slice(1);
  const method = Object.hasOwn(methods, name) ? methods[name] : undefined;
  if (request.method !== 'POST' || !method)
    return reply(404, { error: { code: 'not_found', message: 'no such call' } });
  try {
    const { args } = (await request.json()) as { args: never[] };
    return reply(200, { value: await method(...args) });
  } catch (err) {
    if (err instanceof InvalidInputError) {
      return reply(200, {
        error: { code: err.code, message: err.message, field: err.field, reason: err.issues[0]?.reason },
      });
    }
    const code = err instanceof KeygateError ? err.code : 'internal';
    return reply(503, { error: { code, message: err instanceof Error ? err.message : String(err) } });
  }
}

function reply(status: number, answer: Answer): Response {
  return new Response(JSON.stringify(answer), { status, headers: JSON_HEADERS });
}

/**
 * Calls `method` on the object with `id`: its value, or the `InvalidInputError` the object refused
 * with; any other answer (a 503, a runtime error, an exception the stub threw) throws a plain `Error`,
 * which the client's deadline wrapper turns into its unavailable error.
 *
 * @example
 * const decision = await callObject(namespace, namespace.idFromName(keyId), 'consume', [keyId, limit, cost]);
 */
export async function callObject<T>(
  namespace: DurableObjectNamespaceLike,
  id: DurableObjectIdLike,
  method: string,
  args: readonly unknown[],
): Promise<T> {
  const res = await namespace.get(id).fetch(`https://keygate.do/${method}`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ args }),
  });
  const answer = (await res.json().catch(() => undefined)) as Answer | undefined;
  if (res.status === 200 && answer && 'value' in answer) return answer.value as T;
  const error = answer && 'error' in answer ? answer.error : undefined;
  if (res.status === 200 && error?.code === 'invalid_input' && error.field) {
    throw new InvalidInputError(error.field, error.message, {
      reason: (error.reason ?? 'invalid') as InputIssueReason,
    });
  }
  throw new Error(`the Durable Object answered ${res.status}${error ? `: ${error.message}` : ''}`);
}
