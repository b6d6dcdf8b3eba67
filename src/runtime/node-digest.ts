// Node's side of the `#digest` runtime condition: synchronous one-shot hashing (Node 20.12+).
import * as nodeCrypto from 'node:crypto';
import type { DigestRuntime } from './digest.js';

type OneShotHash = (algorithm: string, data: string, encoding: 'hex') => string;
const oneShot = (nodeCrypto as unknown as { hash?: OneShotHash }).hash;

/** SHA-256 as hex, synchronously. */
export const sha256Hex: DigestRuntime['sha256Hex'] = oneShot
  ? (data) => oneShot('sha256', data, 'hex')
  : (data) => nodeCrypto.createHash('sha256').update(data).digest('hex');

/** HMAC-SHA-256 as hex, synchronously. */
export const hmacSha256Hex: DigestRuntime['hmacSha256Hex'] = (secret, data) =>
  nodeCrypto.createHmac('sha256', secret).update(data).digest('hex');
