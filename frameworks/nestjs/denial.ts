import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AuthFailure } from 'keygate';
import { createNodeDenier, type DenialResponse } from 'keygate/adapter-kit';
import { platformOf } from './platform.js';
import { KEYGATE, type Keygate } from './runtime.js';
import type { KeygateRequest } from './types.js';

// A denial travels through Nest's exception layer as an ApiKeyDeniedException; the module's filter
// writes it with the shared denier, so its status, headers and bytes are every adapter's.

// The problem object of each (frozen, shared) denial, parsed once.
const problems = new WeakMap<DenialResponse, Record<string, unknown>>();
function problemOf(denial: DenialResponse): Record<string, unknown> {
  let problem = problems.get(denial);
  if (!problem) {
    problem = JSON.parse(denial.body) as Record<string, unknown>;
    problems.set(denial, problem);
  }
  return problem;
}

/**
 * What `ApiKeyGuard` throws for a refused request: an `HttpException` with the denial's status and
 * RFC 9457 problem object, the failure (`code`, `status`, ...) and the exact response keygate sends
 * (`denial`: status, headers, body). The filter `KeygateModule` registers answers it with those
 * bytes; an application filter that catches every exception receives it like any other.
 *
 * @example
 * ```ts
 * @Catch(ApiKeyDeniedException)
 * class DeniedLogger implements ExceptionFilter {
 *   catch(error: ApiKeyDeniedException) { console.warn(error.failure.code); }
 * }
 * ```
 */
export class ApiKeyDeniedException extends HttpException {
  /** Why the request was refused (never the raw key). */
  readonly failure: AuthFailure;
  /** The standard denial: status, lower-case headers, problem+json body text. */
  readonly denial: DenialResponse;
  constructor(failure: AuthFailure, denial: DenialResponse) {
    super(problemOf(denial), denial.status);
    this.failure = failure;
    this.denial = denial;
  }
}

/** Writes an ApiKeyDeniedException through the adapter's `onDenied` hook or the standard bytes. */
export class DenialFilter implements ExceptionFilter<ApiKeyDeniedException> {
  private readonly deny: (
    failure: AuthFailure,
    request: KeygateRequest,
    response: unknown,
  ) => Promise<void> | undefined;
  constructor(keygate: Keygate, host: HttpAdapterHost) {
    const platform = platformOf(host);
    this.deny = createNodeDenier<[KeygateRequest, unknown]>({
      respond: keygate.respond,
      onDenied: keygate.onDenied,
      answered: (_request, response) => platform().answered(response),
      write: (denial, _request, response) => platform().write(denial, response),
    });
  }

  catch(error: ApiKeyDeniedException, host: ArgumentsHost): Promise<void> | undefined {
    const http = host.switchToHttp();
    return this.deny(error.failure, http.getRequest<KeygateRequest>(), http.getResponse<unknown>());
  }
}
Catch(ApiKeyDeniedException)(DenialFilter);
Inject(KEYGATE)(DenialFilter, undefined, 0);
Inject(HttpAdapterHost)(DenialFilter, undefined, 1);
