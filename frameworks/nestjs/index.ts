// keygate/nestjs: a global module whose guard authenticates every route of a NestJS 11 or 12
// application, on Express or Fastify, through keygate/adapter-kit.
export type { AuthFailure, HeldCredits, PublicKey } from 'keygate';
export { ApiKey, Public, RequirePermissions } from './decorators.js';
export { ApiKeyDeniedException } from './denial.js';
export { ApiKeyGuard } from './guard.js';
export { KeygateModule } from './module.js';
export type { KeygateModuleAsyncOptions, KeygateModuleOptions, KeygateRequest } from './types.js';
