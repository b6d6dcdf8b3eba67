import type { AuthFailure } from 'keygate';
import type { DenialResponder, DenialResponse } from './problem.js';

/**
 * A denial as bytes, for Node-style writers.
 *
 * @example
 * const write = (denial: NodeDenial, res: ServerResponse) => res.writeHead(denial.status, denial.headers).end(denial.body);
 */
export interface NodeDenial {
  /** The HTTP status: 401, 403, 429 or 503. */
  readonly status: number;
  /** Lower-case header names and their values. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The problem+json body as UTF-8 bytes: a framework adds no `charset` to bytes, so every adapter
   * sends the same headers.
   */
  readonly body: Uint8Array;
}

/**
 * How a Node-style adapter writes to its framework's response; see {@link createNodeDenier}.
 *
 * @example
 * const spec: NodeDenierSpec<[Request, Response]> = {
 *   respond, onDenied, answered: (_req, res) => res.headersSent,
 *   write: (d, _req, res) => res.writeHead(d.status, d.headers).end(d.body),
 * };
 */
export interface NodeDenierSpec<Args extends unknown[]> {
  /** Builds the standard denial; from `resolveAdapterOptions` or `createDenialResponder`. */
  respond: DenialResponder;
  /** The user's hook, which writes its own response; absent for the standard denial only. */
  onDenied?: ((failure: AuthFailure, ...args: Args) => unknown) | undefined;
  /** Whether a response was already sent (Express `res.headersSent`, Fastify `reply.sent`). */
  answered(...args: Args): boolean;
  /** Writes a denial with the framework's own calls. */
  write(denial: NodeDenial, ...args: Args): void;
}

const encoder = new TextEncoder();

/**
 * Builds the denial step of a Node-style adapter (a hook writes to the response itself). Without a
 * hook it writes the standard denial at once. With one it awaits the hook and then writes the
 * standard denial unless the hook answered, also when the hook threw or rejected: a hook can change
 * how a denial looks, never let the request through. Bytes are encoded once per denial. Returns a
 * promise only when a hook ran; it rejects only if writing the standard denial failed.
 *
 * @example
 * const deny = createNodeDenier<[Request, Response]>({
 *   respond,
 *   onDenied,
 *   answered: (_req, res) => res.headersSent,
 *   write: (d, _req, res) => res.writeHead(d.status, d.headers).end(d.body),
 * });
 */
export function createNodeDenier<Args extends unknown[]>(
  spec: NodeDenierSpec<Args>,
): (failure: AuthFailure, ...args: Args) => Promise<void> | undefined {
  const { respond, onDenied, answered, write } = spec;
  const encoded = new WeakMap<DenialResponse, NodeDenial>();
  function standard(failure: AuthFailure, args: Args): void {
    if (answered(...args)) return;
    const denial = respond(failure);
    let bytes = encoded.get(denial);
    if (!bytes) {
      bytes = Object.freeze({ status: denial.status, headers: denial.headers, body: encoder.encode(denial.body) });
      encoded.set(denial, bytes);
    }
    write(bytes, ...args);
  }
  if (!onDenied) return (failure, ...args) => void standard(failure, args);
  return async function denyWithHook(failure, ...args) {
    try {
      await onDenied(failure, ...args);
    } catch {
      // fall through to the standard denial
    }
    standard(failure, args);
  };
}
