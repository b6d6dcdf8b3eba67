// Preloaded (`node --require`) into a process that must stay offline, such as `next build`: every DNS
// lookup of a name other than localhost and every connection to an address other than loopback is
// refused and appended to the file named by KEYGATE_OFFLINE_LOG, which the test then expects empty.
const dns = require('node:dns');
const net = require('node:net');
const { appendFileSync } = require('node:fs');

const log = process.env.KEYGATE_OFFLINE_LOG;
const LOCAL = /^(localhost|127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|0\.0\.0\.0|::)$/i;

function record(what) {
  if (log) appendFileSync(log, `${process.pid} ${what}\n`);
  return new Error(`offline: ${what} refused`);
}

const lookup = dns.lookup;
dns.lookup = function guardedLookup(hostname, ...rest) {
  if (typeof hostname === 'string' && !LOCAL.test(hostname)) {
    const callback = rest.find((arg) => typeof arg === 'function');
    const error = record(`dns ${hostname}`);
    if (callback) return process.nextTick(callback, error);
    throw error;
  }
  return lookup.call(this, hostname, ...rest);
};
const promisesLookup = dns.promises.lookup;
dns.promises.lookup = function guardedPromisesLookup(hostname, ...rest) {
  if (typeof hostname === 'string' && !LOCAL.test(hostname)) return Promise.reject(record(`dns ${hostname}`));
  return promisesLookup.call(this, hostname, ...rest);
};

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const options = args[0] !== null && typeof args[0] === 'object' && !Array.isArray(args[0]) ? args[0] : undefined;
  const host = options ? options.host : typeof args[1] === 'string' ? args[1] : undefined;
  const path = options
    ? options.path
    : typeof args[0] === 'string' && Number.isNaN(Number(args[0]))
      ? args[0]
      : undefined;
  if (!path && host && !LOCAL.test(host)) {
    const error = record(`connect ${host}`);
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return connect.apply(this, args);
};
