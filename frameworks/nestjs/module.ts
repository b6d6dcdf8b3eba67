import { type DynamicModule, Global, Module, type Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { InvalidInputError } from 'keygate';
import { checkOptionNames } from 'keygate/adapter-kit';
import { DenialFilter } from './denial.js';
import { ApiKeyGuard } from './guard.js';
import { createKeygate, FOR_ROOT, KEYGATE } from './runtime.js';
import type { KeygateModuleAsyncOptions, KeygateModuleOptions } from './types.js';

// The members of KeygateModuleAsyncOptions, and the name its factory's options go by in messages.
const ASYNC_OPTION_NAMES = ['imports', 'inject', 'useFactory', 'globalGuard'];
const FACTORY = 'KeygateModule.forRootAsync (the options useFactory returns)';

function providers(keygate: Provider, globalGuard: unknown, field: string): Provider[] {
  if (globalGuard !== undefined && typeof globalGuard !== 'boolean') {
    throw new InvalidInputError(
      field,
      `${field} must be a boolean, got ${globalGuard === null ? 'null' : typeof globalGuard}`,
    );
  }
  const guard: Provider[] = globalGuard === false ? [] : [{ provide: APP_GUARD, useExisting: ApiKeyGuard }];
  return [keygate, ApiKeyGuard, { provide: APP_FILTER, useClass: DenialFilter }, ...guard];
}

/**
 * keygate for NestJS 11 and 12, on `@nestjs/platform-express` and `@nestjs/platform-fastify`: a
 * global module whose guard ({@link ApiKeyGuard}) authenticates every route by API key, and whose
 * exception filter answers a refused request with the same status, headers and RFC 9457 bytes as
 * every keygate adapter. Routes opt out with `Public()` and ask for more with `RequirePermissions()`;
 * handlers read the key with `@ApiKey()`.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [KeygateModule.forRoot({ store, permissions: ['email:read'] })],
 *   controllers: [VerifyController],
 * })
 * class AppModule {}
 * ```
 */
export class KeygateModule {
  /**
   * The module with these options, which are validated here: a bad option throws
   * `InvalidInputError` naming it in `field`, before the application is created.
   *
   * @example
   * KeygateModule.forRoot({ store: new CachedKeyStore(store), permissions: ['email:read'], retryAfterMs: 10_000 });
   */
  static forRoot(options: KeygateModuleOptions): DynamicModule {
    const keygate = createKeygate(options, FOR_ROOT);
    return {
      module: KeygateModule,
      providers: providers({ provide: KEYGATE, useValue: keygate }, options.globalGuard, 'globalGuard'),
      exports: [KEYGATE, ApiKeyGuard],
    };
  }

  /**
   * The module with options built by a factory that Nest injects (a config service, a database
   * client), awaited while the application starts; bad options then throw `InvalidInputError`
   * naming the field from `NestFactory.create` (with `abortOnError: false`; by default Nest logs it
   * and exits).
   *
   * @example
   * KeygateModule.forRootAsync({
   *   imports: [StoreModule],
   *   inject: [KEY_STORE],
   *   useFactory: (store: KeyStore) => ({ store, permissions: ['email:read'] }),
   * });
   */
  static forRootAsync(options: KeygateModuleAsyncOptions): DynamicModule {
    checkOptionNames(options, ASYNC_OPTION_NAMES, 'KeygateModule.forRootAsync');
    const { imports = [], inject = [], useFactory, globalGuard } = options ?? ({} as KeygateModuleAsyncOptions);
    if (typeof useFactory !== 'function') throw new InvalidInputError('useFactory', 'useFactory must be a function');
    const keygate: Provider = {
      provide: KEYGATE,
      inject: inject as never[],
      useFactory: async (...args: never[]) => createKeygate(await useFactory(...args), FACTORY),
    };
    return {
      module: KeygateModule,
      imports: imports as never[],
      providers: providers(keygate, globalGuard, 'globalGuard'),
      exports: [KEYGATE, ApiKeyGuard],
    };
  }
}
Global()(KeygateModule);
Module({})(KeygateModule);
