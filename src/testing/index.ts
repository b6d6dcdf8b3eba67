export type {
  ContractAssertion,
  ContractOptions,
  ContractTestApi,
  StoreFixture,
} from './store-contract.js';
export { describeKeyStoreContract } from './store-contract.js';
