// keygate/adapter-kit: what a framework adapter needs, and all that keygate's own four use. Requests
// are authenticated through the package's own name (like every other entry point), so an adapter and
// the application share one copy of the core: one error class, one cache of compiled keys. Option
// validation (`resolveAuthOptions`) is bundled from the sources, as in every kit: it is stateless and
// throws the root's error classes, which every entry imports through `#errors` (see tsup.config.ts).
export type {
  AuthenticateOptions,
  AuthFailure,
  AuthRequest,
  AuthResult,
  AuthSuccess,
  CreditOptions,
  HeldCredits,
  KeyStore,
} from 'keygate';
export { authenticate, authenticateEager } from 'keygate';
export type { ResolvedOptions } from '../auth/authenticate.js';
export { resolveAuthOptions } from '../auth/authenticate.js';
export { finishCredits, holdCredits } from '../auth/finish-credits.js';
export { AUTH_OPTION_NAMES } from '../auth/options.js';
export type { ResolvedCredits } from '../credits/options.js';
export type { RateLimitHeaderFields } from '../rate-limit/header-fields.js';
export { rateLimitHeaderFields, withRateLimitHeaders } from '../rate-limit/header-fields.js';
// The one rule for every Retry-After (whole seconds, rounded up); the dashboard's sign-in throttle uses it too.
export { retryAfterSeconds } from '../rate-limit/headers.js';
export type { Answering, ResolvedRateLimit } from '../rate-limit/options.js';
export { checkOptionNames, closestName } from '../validate/options.js';
export type { HeaderSource } from '../vocabulary/result.js';
export type { ClientAddress } from './address.js';
export { isPromise, readAddress } from './address.js';
export { statusToBill } from './billed-status.js';
export { createFetchDenier, denialResponse } from './fetch-denial.js';
export type { NodeDenial, NodeDenierSpec } from './node-denial.js';
export { createNodeDenier } from './node-denial.js';
export type { NodeHeaderLines } from './node-headers.js';
export { createNodeHeaders } from './node-headers.js';
export type { AdapterOptions, AdapterRequest, ResolvedAdapterOptions } from './options.js';
export { resolveAdapterOptions } from './options.js';
export type { DenialResponder, DenialResponderOptions, DenialResponse } from './problem.js';
export { createDenialResponder } from './problem.js';
// Reading a request body under a byte limit: the dashboard's forms and keygate/leaks' reports use it.
export { readCapped } from './read-body.js';
export { createRouteOptions } from './route-options.js';
