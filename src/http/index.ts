// keygate/adapter-kit: what a framework adapter needs, and all that keygate's own four use. The kit
// reaches the core through the package's own name (like every other entry point), so an adapter and
// the application share one copy of it: one error class, one cache of compiled keys. It therefore
// needs these from the root entry: authenticate, authenticateEager, resolveAuthOptions, DENIALS and
// InvalidInputError (and the types below).
export type { AuthenticateOptions, AuthFailure, AuthRequest, AuthResult, HeaderSource, KeyStore } from 'keygate';
export { authenticate, authenticateEager, resolveAuthOptions } from 'keygate';
export type { ClientAddress } from './address.js';
export { isPromise, readAddress } from './address.js';
export { createFetchDenier, denialResponse } from './fetch-denial.js';
export type { NodeDenial, NodeDenierSpec } from './node-denial.js';
export { createNodeDenier } from './node-denial.js';
export type { AdapterOptions, ResolvedAdapterOptions } from './options.js';
export { resolveAdapterOptions } from './options.js';
export type { DenialResponder, DenialResponderOptions, DenialResponse } from './problem.js';
export { createDenialResponder } from './problem.js';
export { createRouteOptions } from './route-options.js';
