import { connect } from 'node:net';

/** Where the shared-store tests find their services. */
export const PG_URL = process.env.KEYGATE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.KEYGATE_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A short id, unique per test-file run, for schemas and key prefixes that parallel runs must not share. */
export const RUN_ID = `${process.pid.toString(36)}${Math.random().toString(36).slice(2, 8)}`;

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/**
 * Whether the service behind `url` accepts connections. When it does not: with
 * `KEYGATE_REQUIRE_SERVICES=1` (CI) it throws, so the test file fails; otherwise it prints one line
 * saying how to enable the tests and returns false, so the file skips them.
 */
export async function serviceAvailable(name: string, url: string, envVar: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const host = hostname.replace(/^\[|\]$/g, '');
  const defaultPort = url.startsWith('redis') ? 6379 : 5432;
  const where = `${host}:${port || defaultPort}`;
  if (await reachable(host, Number(port || defaultPort))) return true;
  if (process.env.KEYGATE_REQUIRE_SERVICES === '1') {
    throw new Error(`${name} not reachable at ${where}, and KEYGATE_REQUIRE_SERVICES=1 requires it`);
  }
  console.log(`${name} not reachable at ${where}: skipping; start it or set ${envVar}`);
  return false;
}
