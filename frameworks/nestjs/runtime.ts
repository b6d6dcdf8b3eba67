import type { AuthenticateOptions, AuthFailure, KeyStore } from 'keygate';
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

/** Validates the options (`InvalidInputError` naming the field) and resolves them once. */
export function createKeygate(options: KeygateModuleOptions): Keygate {
  const { globalGuard: _, ...adapterOptions } = (options ?? {}) as KeygateModuleOptions;
  const { store, auth, respond, onDenied } = resolveAdapterOptions(adapterOptions);
  return { store, auth, respond, onDenied, narrow: createRouteOptions(auth) };
}
