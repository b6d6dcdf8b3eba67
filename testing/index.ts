export type { AuditLogFixture } from './audit-contract.js';
export { describeAuditLogContract } from './audit-contract.js';
export type { DashboardStoreFixture } from './contract-types.js';
export type { CreditLedgerContractOptions, CreditLedgerFixture } from './credit-contract.js';
export { describeCreditLedgerContract } from './credit-contract.js';
export type { CreditLedgerHook, CreditLedgerHooks, MigratableCreditLedger } from './credit-hooks.js';
export type { DashboardStoreContractOptions } from './dashboard-contract.js';
export { describeDashboardStoreContract } from './dashboard-contract.js';
export type { RateLimiterContractOptions } from './limiter-contract.js';
export { describeRateLimiterContract } from './limiter-contract.js';
export type { LimiterFixture, MigratableRateLimiter, RateLimiterHook, RateLimiterHooks } from './limiter-hooks.js';
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
