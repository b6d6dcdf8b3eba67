import type { AuthFailure, HeldCredits, PublicKey } from 'keygate';
import type { AdapterOptions } from 'keygate/adapter-kit';

// The Nest adapter's public types. Nest runs on Express or Fastify: the request a guard, a cost
// function or a hook receives is that platform's own (an Express `Request` or a `FastifyRequest`).

/**
 * What keygate reads and sets on the platform's request: the headers and the address the platform
 * resolved (`req.ip` under Express's `trust proxy`, `request.ip` under Fastify's `trustProxy`), and
 * after the guard allowed it, the key's public view and the credits held for it.
 *
 * @example
 * ```ts
 * @Post('verify')
 * verify(@Req() req: KeygateRequest) {
 *   return { account: req.apiKey?.accountId, held: req.apiKeyCredits?.cost ?? 0 };
 * }
 * ```
 */
export interface KeygateRequest {
  /** The request headers, as the platform holds them. */
  readonly headers: Record<string, string | string[] | undefined>;
  /** The client address as the platform resolved it under its own proxy trust setting. */
  readonly ip?: string | undefined;
  /** The authenticated key's public view (no secret, no hash); absent on `Public()` routes. */
  apiKey?: PublicKey;
  /** With the `credits` option, the credits held for this request (settled or released when the response ends). */
  apiKeyCredits?: HeldCredits;
}

/**
 * Options of {@link KeygateModule.forRoot}: the options every keygate adapter takes (`store`,
 * `permissions`, `rateLimit`, `credits`, `from`, `header`, `timeoutMs`, `retryAfterMs`, `onEvent`, ...)
 * plus this module's own. A `rateLimit.cost` or `credits.cost` function receives the platform's
 * request as `native`, after Nest parsed the body (`cost: ({ native }) => native.body.emails.length`).
 *
 * @example
 * const options: KeygateModuleOptions = { store, permissions: ['email:read'], retryAfterMs: 10_000 };
 */
export interface KeygateModuleOptions extends AdapterOptions<KeygateRequest> {
  /**
   * Replaces the problem+json denial by writing its own response to the platform's response (an
   * Express `Response` or a `FastifyReply`). If it throws, rejects or sends nothing, the standard
   * denial is sent: a hook can never turn a denial into an allow.
   */
  onDenied?: (failure: AuthFailure, request: KeygateRequest, response: unknown) => void | Promise<void>;
  /**
   * Registers {@link ApiKeyGuard} as a global guard (`APP_GUARD`), so that every route needs a key
   * unless marked `Public()`. `false` registers nothing global: put `UseGuards(ApiKeyGuard)` on the
   * controllers that need a key. @default true
   */
  globalGuard?: boolean;
}

/**
 * Options of {@link KeygateModule.forRootAsync}: a factory for the {@link KeygateModuleOptions}, with
 * the providers it is injected with and the modules that export them, as Nest's own `forRootAsync`
 * modules take them. `globalGuard` is read here, since it decides the module's providers.
 *
 * @example
 * KeygateModule.forRootAsync({
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ store: config.keyStore, permissions: ['email:read'] }),
 * });
 */
export interface KeygateModuleAsyncOptions {
  /** Modules whose exported providers the factory needs. @default [] */
  imports?: unknown[];
  /** Tokens of the providers passed to `useFactory`, in order. @default [] */
  inject?: unknown[];
  /**
   * Builds the options; may be async. Bad options (an unknown member among them, and `globalGuard`,
   * which belongs here in `forRootAsync`'s own options) throw `InvalidInputError` while the application starts.
   */
  useFactory: (
    ...args: never[]
  ) => Omit<KeygateModuleOptions, 'globalGuard'> | Promise<Omit<KeygateModuleOptions, 'globalGuard'>>;
  /** As {@link KeygateModuleOptions.globalGuard}. @default true */
  globalGuard?: boolean;
}
