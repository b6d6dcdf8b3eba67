import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { refusedAddress } from '../../src/outbox/targets.js';
import { RefusedTargetError } from '../failure.js';
import type { ResolveHost, SendArgs } from './types.js';

/** On Node, a name's addresses are all checked at connect time (no gap for DNS rebinding). */
export const checksResolvedAddresses = true;

const systemResolve: ResolveHost = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

// The socket's `lookup`: resolves the name, refuses it if any of its addresses is internal (one
// internal answer is enough to doubt the name), and hands the socket the addresses it checked, so it
// connects to nothing else.
function checkedLookup(resolve: ResolveHost, allowPrivateNetworks: boolean): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolve(hostname).then(
      (answers) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses: LookupAddress[] = answers
          .filter((a) => family === 0 || a.family === family)
          .map((a) => ({ address: a.address, family: a.family }));
        const why = allowPrivateNetworks
          ? null
          : answers.map((a) => refusedAddress(a.address)).find((reason) => reason !== null);
        if (why) return callback(new RefusedTargetError(hostname, why), '', 0);
        const first = addresses[0];
        if (!first) {
          const none = Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
          return callback(none, '', 0);
        }
        if (options.all) return callback(null, addresses);
        return callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/**
 * POSTs with node:http or node:https, through a `lookup` that checks every address the host resolves
 * to; a fresh connection each time (no pooled socket of another check). Resolves to the status; the
 * body is never read.
 *
 * @example
 * const status = await sendWebhook({ url: new URL('https://hooks.example.com/'), headers, body, signal, allowPrivateNetworks: false, resolve: undefined });
 */
export function sendWebhook(args: SendArgs): Promise<number> {
  const request = args.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(args.url, {
      method: 'POST',
      headers: { ...args.headers, 'content-length': String(Buffer.byteLength(args.body)) },
      agent: false,
      lookup: checkedLookup(args.resolve ?? systemResolve, args.allowPrivateNetworks),
      signal: args.signal,
    });
    req.on('response', (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy();
    });
    req.on('error', reject);
    req.end(args.body);
  });
}
