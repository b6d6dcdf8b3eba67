import { type AuthenticateOptions, type AuthFailure, InvalidInputError, type KeyStore } from 'keygate';
import { createRouteOptions, type DenialResponder, resolveAdapterOptions } from 'keygate/adapter-kit';
import type { KeygateModuleOptions, KeygateRequest } from './types.js';

/** The Nest provider token of the resolved options, shared by the guard and the denial filter. */
export const KEYGATE = Symbol('keygate');

/** The module's options, validated once. */
export interface Keygate {
  readonly store: KeyStore;
  readonly auth: AuthenticateOptions;
  readonly respond: DenialResponder;
  readonly onDenied: ((failure: AuthFailure, request: KeygateRequest, response: unknown) => unknown) | undefined;
  /** The core options of a route that requires more permissions (built once per handler). */
  readonly narrow: (route: object, permissions: readonly string[]) => AuthenticateOptions;
}

/**
 * Validates the options (`InvalidInputError` naming the field, an unknown member refused with
 * reason `unknown_option`) and resolves them once. `where` names the caller for messages; the options
 * a `forRootAsync` factory returns may not hold `globalGuard` (it decides the module's providers, so
 * it is read from `forRootAsync`'s own options, before the factory runs).
 */
export function createKeygate(options: KeygateModuleOptions, where: string): Keygate {
  const own = where === FOR_ROOT ? ['globalGuard'] : [];
  if (where !== FOR_ROOT && options !== null && typeof options === 'object' && 'globalGuard' in options) {
    throw new InvalidInputError(
      'globalGuard',
      `globalGuard is not an option of ${where}: it decides the module's providers, so give it to forRootAsync itself, next to useFactory`,
      { reason: 'unknown_option' },
    );
  }
  const { store, auth, respond, onDenied } = resolveAdapterOptions(options, where, own);
  return { store, auth, respond, onDenied, narrow: createRouteOptions(auth) };
}

/** The name `KeygateModule.forRoot` gives its options in messages. */
export const FOR_ROOT = 'KeygateModule.forRoot';
