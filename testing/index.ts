export type { AuditLogFixture } from './audit-contract.js';
export { describeAuditLogContract } from './audit-contract.js';
export type { CreditLedgerContractOptions, CreditLedgerFixture } from './credit-contract.js';
export { describeCreditLedgerContract } from './credit-contract.js';
export type { CreditLedgerHook, CreditLedgerHooks, MigratableCreditLedger } from './credit-hooks.js';
export type {
  DashboardStoreContractOptions,
  DashboardStoreFixture,
} from './dashboard-contract.js';
export { describeDashboardStoreContract } from './dashboard-contract.js';
export type { LimiterFixture, RateLimiterContractOptions } from './limiter-contract.js';
export { describeRateLimiterContract } from './limiter-contract.js';
export type { MigratableRateLimiter, RateLimiterHook, RateLimiterHooks } from './limiter-hooks.js';
export type { OutboxFixture } from './outbox-contract.js';
export { describeOutboxContract } from './outbox-contract.js';
export type {
  ContractAssertion,
  ContractOptions,
  ContractTestApi,
  KeyStoreHook,
  MigratableKeyStore,
  StoreFixture,
} from './store-contract.js';
export { describeKeyStoreContract } from './store-contract.js';
