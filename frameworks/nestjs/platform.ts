import type { HttpAdapterHost } from '@nestjs/core';
import type { NodeDenial } from 'keygate/adapter-kit';

// What the guard and the denial filter write, the platform's own way. Fastify's reply is written
// through its own API (its hooks run, and bytes get no `charset`); any other platform (Express) through
// Nest's HTTP adapter, whose response is Node's `ServerResponse`.

interface NodeResponse {
  readonly statusCode: number;
  end: (...args: unknown[]) => unknown;
}

interface FastifyReplyLike {
  readonly raw: NodeResponse;
  readonly sent: boolean;
  code(status: number): FastifyReplyLike;
  headers(headers: Record<string, string>): FastifyReplyLike;
  send(payload: Uint8Array): unknown;
}

/** The platform's writes that keygate needs. */
export interface Platform {
  /** Whether a response was already sent. */
  answered(response: unknown): boolean;
  setHeader(response: unknown, name: string, value: string): void;
  write(denial: NodeDenial, response: unknown): void;
  /** Node's `ServerResponse` under the platform's response: its `end` closes a credit hold. */
  raw(response: unknown): NodeResponse;
}

/** Reads the platform once, at the first request (the HTTP adapter is not set in a standalone context). */
export function platformOf(host: HttpAdapterHost): () => Platform {
  let platform: Platform | undefined;
  return () => {
    if (platform) return platform;
    const adapter = host.httpAdapter;
    const setHeader = (response: unknown, name: string, value: string) => void adapter.setHeader(response, name, value);
    platform =
      adapter.getType() === 'fastify'
        ? {
            answered: (reply) => (reply as FastifyReplyLike).sent,
            setHeader,
            write: (denial, reply) =>
              void (reply as FastifyReplyLike).code(denial.status).headers(denial.headers).send(denial.body),
            raw: (reply) => (reply as FastifyReplyLike).raw,
          }
        : {
            answered: (response) => Boolean(adapter.isHeadersSent(response)),
            setHeader,
            write(denial, response) {
              adapter.status(response, denial.status);
              for (const [name, value] of Object.entries(denial.headers)) adapter.setHeader(response, name, value);
              adapter.end(response, denial.body as never);
            },
            raw: (response) => response as NodeResponse,
          };
    return platform;
  };
}
