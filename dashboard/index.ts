// The store `dashboard()` takes, named here too so that a host needs one import.
export type { DashboardStore, KeyPage, KeyPageQuery } from 'keygate/store-kit';
export type { AccountPanelEntry } from './context.js';
export type { Dashboard, DashboardOptions } from './dashboard.js';
export { dashboard } from './dashboard.js';
export type { RateLimitSetting } from './forms/key-form.js';
export { MemoryDashboardStore } from './memory-store.js';
export type {
  FastifyLike,
  FastifyReplyLike,
  FastifyRequestLike,
  FetchHandler,
  NodeRequestFacts,
  NodeRequestLike,
  NodeResponseLike,
} from './node.js';
export { toFastifyPlugin, toFetchRequest, toNodeHandler, writeFetchResponse } from './node.js';
export { SECURITY_HEADERS } from './security/headers.js';
export type { SignInLinkOptions } from './security/sign-in-token.js';
export { createSignInLink, SIGN_IN_LINK_TTL_MS } from './security/sign-in-token.js';
