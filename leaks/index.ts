// keygate/leaks: answers GitHub's secret scanning partner program for a service's own keygate keys.
export { derToRawSignature } from './der.js';
export type { GithubSecretScanningOptions, LeakPolicy, LeakRotation } from './github.js';
export { GITHUB_ACTOR, githubSecretScanning } from './github.js';
export { secretScanningPattern } from './pattern.js';
export type { ReportedToken } from './payload.js';
export type { FetchFunction } from './public-keys.js';
export { GITHUB_SECRET_SCANNING_KEYS_URL } from './public-keys.js';
export type { LeakProblemCode } from './respond.js';
