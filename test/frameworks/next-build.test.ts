// A real Next.js app: `next build` (offline) and `next start` of test/frameworks/next-app, its gate
// being keygate/next, then requests over a real socket. Built twice: as `middleware.ts` (Edge
// runtime) and renamed to `proxy.ts` (Next 16's Node.js runtime). Each build goes into a copy of the
// app inside the repository (so `keygate` resolves to this package), gitignored and removed after.
// The built `keygate` comes from dist/: run `npm run build` first.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { createDenialResponder } from 'keygate/adapter-kit';
import { SIGNED_KEY_HEADER } from 'keygate/next';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedCaseStore } from './fixtures.js';

const ROOT = join(import.meta.dirname, '../..');
const APP = join(import.meta.dirname, 'next-app');
const NEXT = join(ROOT, 'node_modules/next/dist/bin/next');
const GUARD = join(ROOT, 'test/support/offline-guard.cjs');
const BUILD_TIMEOUT_MS = 300_000;

const fixture = await seedCaseStore();
const secret = `next-build-test-${crypto.randomUUID()}`;
const respond = createDenialResponder({});

/** Runs a command; resolves with its output, rejects with it on a non-zero exit. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} ${args.join(' ')} failed:\n${stdout}\n${stderr}`)) : resolve(stdout),
    );
  });
}

// `unshare -n` runs the build in a network namespace with no interface up: offline for real. Where
// it is not permitted, the guard alone records and refuses any attempt.
const canUnshare = await run('unshare', ['-n', 'true'], ROOT, process.env).then(
  () => true,
  () => false,
);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A started `next start`, answering on `base`; `stop` ends its whole process group. */
async function start(dir: string, env: NodeJS.ProcessEnv): Promise<{ base: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [NEXT, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: dir,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
    await exited;
  };
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 300; tries++) {
    if (child.exitCode !== null) throw new Error(`next start exited:\n${output}`);
    const up = await fetch(`${base}/public`).then(
      () => true,
      () => false,
    );
    if (up) return { base, stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  throw new Error(`next start did not answer within 30 s:\n${output}`);
}

/** A header that claims to be the middleware's, signed with nothing. */
function forgedHeader(): string {
  const view = Buffer.from(JSON.stringify({ id: 'key_forged', accountId: 'acct_evil' })).toString('base64url');
  return `v1.${Date.now()}.${view}.${Buffer.from('not a mac').toString('base64url')}`;
}

describe('keygate/next bundled for the Edge runtime', () => {
  it('carries the Web Crypto digest and imports no node: module', async () => {
    if (!existsSync(join(ROOT, 'dist', 'next.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    // What Next's Edge bundle resolves: the `edge-light` condition, never `node`; Next itself is Next's to bundle.
    const result = await build({
      stdin: { contents: "export * from 'keygate/next';", resolveDir: ROOT, loader: 'js' },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      conditions: ['edge-light', 'worker', 'browser'],
      mainFields: ['module', 'main'],
      external: ['next', 'next/*'],
      logLevel: 'silent',
    });
    const text = result.outputFiles[0]?.text ?? '';
    expect(text).toContain('apiKeyMiddleware');
    expect(text).toContain('crypto.subtle');
    expect(text.match(/(?:from |import\(|require\()\s*["']node:[^"']+/g) ?? []).toEqual([]);
  });
});

describe.each([
  ['middleware.ts on the Edge runtime', 'middleware.ts'],
  ['proxy.ts on the Node.js runtime', 'proxy.ts'],
] as const)('a built Next.js app, its gate as %s', (_, gateFile) => {
  const dir = join(import.meta.dirname, `.next-app-${gateFile.replace('.ts', '')}-${process.pid}`);
  const offlineLog = join(dir, 'offline.log');
  let server: { base: string; stop: () => Promise<void> } | undefined;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server!.base}${path}`, { headers });

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist', 'next.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    rmSync(dir, { recursive: true, force: true });
    cpSync(APP, dir, { recursive: true });
    writeFileSync(join(dir, 'keygate-fixture.json'), JSON.stringify({ secret, records: fixture.records }));
    if (gateFile === 'proxy.ts') renameSync(join(dir, 'middleware.ts'), join(dir, 'proxy.ts'));
    writeFileSync(offlineLog, '');
    const env = {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: '1',
      NODE_ENV: 'production',
      NODE_OPTIONS: `--require ${GUARD}`,
      KEYGATE_OFFLINE_LOG: offlineLog,
    };
    const build = [NEXT, 'build'];
    await (canUnshare
      ? run('unshare', ['-n', process.execPath, ...build], dir, env)
      : run(process.execPath, build, dir, env));
    server = await start(dir, env);
  }, BUILD_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets an allowed key reach the route, which reads the verified view', async () => {
    const res = await get('/api/v1/check', { 'x-api-key': fixture.secrets.open });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ keyId: fixture.ids.open, accountId: 'acct_1', signedHeader: true });
  });

  it('forwards a POST with its JSON body', async () => {
    const res = await fetch(`${server!.base}/api/v1/check`, {
      method: 'POST',
      headers: { 'x-api-key': fixture.secrets.open, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@example.com' }),
    });
    expect(await res.json()).toMatchObject({ keyId: fixture.ids.open, body: { email: 'a@example.com' } });
  });

  it.each([
    ['no key', {}, 'missing_api_key'],
    ['an unknown key', { 'x-api-key': fixture.secrets.unknown }, 'invalid_api_key'],
    ['a malformed key', { 'x-api-key': 'mk_live_nope' }, 'malformed_api_key'],
    ['a revoked key', { 'x-api-key': fixture.secrets.revoked }, 'revoked_api_key'],
    ['a key without the permission', { 'x-api-key': fixture.secrets.readOnly }, 'insufficient_permissions'],
    ['only a forged signed header', { [SIGNED_KEY_HEADER]: forgedHeader() }, 'missing_api_key'],
  ] as const)('answers %s with the shared denial, byte for byte', async (_, headers, code) => {
    const res = await get('/api/v1/check', headers);
    const want = respond({ code });
    expect({
      status: res.status,
      contentType: res.headers.get('content-type'),
      challenge: res.headers.get('www-authenticate'),
      cacheControl: res.headers.get('cache-control'),
      body: await res.text(),
    }).toEqual({
      status: want.status,
      contentType: want.headers['content-type'],
      challenge: want.headers['www-authenticate'] ?? null,
      cacheControl: want.headers['cache-control'] ?? null,
      body: want.body,
    });
  });

  it("gives the route the middleware's view, not a client's forged copy", async () => {
    const res = await get('/api/v1/check', { 'x-api-key': fixture.secrets.open, [SIGNED_KEY_HEADER]: forgedHeader() });
    expect(await res.json()).toMatchObject({ keyId: fixture.ids.open });
  });

  it('strips a forged header on a path where the middleware runs without requiring a key', async () => {
    const res = await get('/api/health', { [SIGNED_KEY_HEADER]: forgedHeader() });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ keyId: null, signedHeader: false });
  });

  it('lets a public path outside the matcher through, where a forged header verifies to nothing', async () => {
    const res = await get('/public', { [SIGNED_KEY_HEADER]: forgedHeader() });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ keyId: null, signedHeader: true });
  });

  it('built and served without any network access', () => {
    expect(readFileSync(offlineLog, 'utf8')).toBe('');
  });
});
