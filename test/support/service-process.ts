import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');

/** The example service running in a child process, as `npm start` runs it. */
export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves with the first match of `pattern` in its output, once it has printed one. */
  waitFor(pattern: RegExp): Promise<string>;
  /** SIGTERM, and waits for its exit (a graceful stop: counts flushed, store closed, folder released). */
  stop(): Promise<void>;
}

// The example imports `keygate` by name, which resolves to dist/: build first.
const SERVER = join(ROOT, 'examples/email-verification/server.js');

/**
 * Starts the example service on the PGlite folder `dir` (port chosen by the system) and resolves once
 * it listens; rejects with its output if it exits first.
 *
 * @example
 * const service = await startService(dir); ... await service.stop();
 */
export function startService(dir: string): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [SERVER, '--data-dir', dir], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waitFor = async (pattern: RegExp): Promise<string> => {
    for (;;) {
      const found = pattern.exec(text);
      if (found) return found[1] ?? found[0];
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`service exited:\n${text}`);
      await new Promise<void>((resolve) => {
        const done = () => {
          child.stdout?.off('data', done);
          child.off('exit', done);
          resolve();
        };
        child.stdout?.on('data', done);
        child.once('exit', done);
      });
    }
  };
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return waitFor(/service on (http:\/\/\S+)/).then((url) => ({
    child,
    url,
    output: () => text,
    waitFor,
    stop: () => stop(child, exited),
  }));
}

async function stop(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await exited;
}
