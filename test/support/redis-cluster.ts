// A Redis Cluster of three masters on loopback ports, started by the test file that needs it and torn
// down after it: three `redis-server --cluster-enabled yes` processes in a temporary folder, joined by
// `redis-cli --cluster create`. It needs only the redis-server and redis-cli binaries (Debian's
// redis-server package; CI has them for the standalone server already).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A running three-master cluster. */
export interface RedisCluster {
  /** The masters' ports on 127.0.0.1. */
  readonly ports: readonly number[];
  /** `redis://127.0.0.1:<port>` of each master: any of them is a root node for a cluster client. */
  readonly urls: readonly string[];
  /** Kills the servers, waits for them to exit and removes their folder. */
  stop(): Promise<void>;
}

/** Whether redis-server and redis-cli run here. Without them: fails with KEYGATE_REQUIRE_SERVICES=1 (CI), else skips. */
export async function clusterAvailable(): Promise<boolean> {
  try {
    await run('redis-server', ['--version']);
    await run('redis-cli', ['--version']);
    return true;
  } catch {
    if (process.env.KEYGATE_REQUIRE_SERVICES === '1') {
      throw new Error('redis-server and redis-cli are needed for the Redis Cluster tests (KEYGATE_REQUIRE_SERVICES=1)');
    }
    console.log('redis-server or redis-cli not found: skipping the Redis Cluster tests; install redis-server');
    return false;
  }
}

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

// Each node needs its port and its cluster-bus port (port + 10000) free: ports 20000..44999 keep the
// bus below 65536 and away from the ephemeral range most systems hand out (32768 up, on Linux).
async function freePorts(count: number): Promise<number[]> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 2_500) * 10;
    const ports = Array.from({ length: count }, (_, i) => base + i);
    const checks = await Promise.all(ports.flatMap((p) => [free(p), free(p + 10_000)]));
    if (checks.every(Boolean)) return ports;
  }
  throw new Error('no free ports for a Redis Cluster');
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`Redis Cluster: ${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const cli = (port: number, ...args: string[]) =>
  run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]).then((r) => r.stdout);

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts three masters on free loopback ports, creates the cluster (all 16384 slots shared out) and
 * resolves once every node says `cluster_state:ok`. The caller stops it (`afterAll`); should the test
 * process exit first, the servers are killed on its way out.
 *
 * @example
 * const cluster = await startRedisCluster();
 * afterAll(() => cluster.stop());
 * const client = await createCluster({ rootNodes: cluster.urls.map((url) => ({ url })) }).connect();
 */
export async function startRedisCluster(): Promise<RedisCluster> {
  // Another run may take a port between the check and redis-server's bind: start again on other ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce();
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

async function startOnce(): Promise<RedisCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'keygate-cluster-'));
  const ports = await freePorts(3);
  const children = ports.map((port) =>
    spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--logfile',
        join(dir, `redis-${port}.log`),
      ],
      { stdio: 'ignore' },
    ),
  );
  const killAll = () => {
    for (const child of children) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const stop = async () => {
    process.off('exit', killAll);
    await Promise.all(children.map(stopProcess));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports)
      await until(`node ${port} answering`, async () => (await cli(port, 'ping')).includes('PONG'));
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await until(`cluster_state:ok on ${port}`, async () =>
        (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'),
      );
      await until(`node ${port} knowing every master`, async () => {
        const nodes = await cli(port, 'cluster', 'nodes');
        return nodes.split('\n').filter((line) => line.includes('master') && /\d+-\d+/.test(line)).length === 3;
      });
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { ports, urls: ports.map((p) => `redis://127.0.0.1:${p}`), stop };
}
