import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The benchmark itself is `npm run bench`; here it runs once with tiny durations, only to keep it
// working. Its speed figures mean nothing at this length and are not asserted; its invariants are.
describe('npm run bench (quick)', () => {
  let dir = '';
  let out = '';
  let report = '';
  let run = { stdout: '', stderr: '' };
  let variants: readonly string[] = [];
  beforeAll(async () => {
    const http = '../../bench/http.mjs'; // plain JavaScript, imported by path to keep tsc out of it
    ({ VARIANTS: variants } = (await import(http)) as { VARIANTS: readonly string[] });
    dir = await mkdtemp(join(tmpdir(), 'keygate-bench-'));
    out = join(dir, 'RESULTS.md');
    run = await promisify(execFile)(process.execPath, ['bench/run.mjs', '--quick', '--out', out], {
      encoding: 'utf8',
      timeout: 420_000,
    });
    report = await readFile(out, 'utf8');
  }, 450_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes every section of the report', () => {
    for (const heading of ['## Targets', '## Micro-benchmarks', '## HTTP throughput', '## Floods', '## CPU profile']) {
      expect(report).toContain(heading);
    }
    expect(run.stderr).toContain(`wrote ${out}`);
  });

  it('measures every server variant, each answering only 2xx to the valid key', () => {
    expect(variants.length).toBe(19);
    for (const variant of variants) expect(report).toMatch(new RegExp(`^\\| ${variant} \\| [\\d,]+ \\|`, 'm'));
  });

  // One EVALSHA per request; requests still in flight when a round ends add their command to the count only.
  it('measures the memory rate limiter beside the plain cached key, and states the Redis limits ratio with its round trips', () => {
    expect(report).toMatch(/^\| authenticate \| cached key \+ MemoryRateLimiter \| [\d.]+ \|/m);
    expect(report).toMatch(/^\| `MemoryRateLimiter` adds to a cached `authenticate` ≤ 0\.3 µs \| -?[\d.]+ µs \|/m);
    for (const variant of ['fastify-keygate-limits', 'fastify-keygate-limits-notimeout']) {
      expect(report).toMatch(
        new RegExp(`${variant} / fastify-keygate .*\\| [\\d.]+ × \\| stated \\| 1\\.0\\d Redis commands per request`),
      );
    }
  });

  it('states Fastify with leased limits and leased credits against Fastify without them, with their store round trips', () => {
    for (const variant of [
      'fastify-keygate-limits-leased',
      'fastify-keygate-credits-redis-leased',
      'fastify-keygate-credits-pg-leased',
    ]) {
      expect(report).toMatch(
        new RegExp(
          `^\\| HTTP ${variant} / fastify-keygate ≥ 0\\.85 .*\\| [\\d.]+ × \\| (met|missed .*) \\| [\\d.]+ store round trips per request`,
          'm',
        ),
      );
    }
  });

  it('states the same limits and credits in memory, the floor of leasing, against Fastify without them', () => {
    for (const variant of ['fastify-keygate-limits-memory', 'fastify-keygate-credits-memory']) {
      expect(report).toMatch(
        new RegExp(
          `^\\| HTTP ${variant} / fastify-keygate \\(.*no store.*stated, no target\\) \\| [\\d.]+ × \\| stated \\|`,
          'm',
        ),
      );
    }
  });

  it('states the store round trips per request with leases, and the heap per cached key, from the same run', () => {
    expect(report).toContain('## Leased budgets: store round trips per request');
    expect(report).toContain('## Memory per cached key');
    for (const store of ['Redis', 'PostgreSQL', 'MariaDB']) {
      for (const what of ['limits, a key far from its limit', 'credits, a funded account \\(hold \\+ settle\\)']) {
        expect(report).toMatch(
          new RegExp(
            `^\\| ${store}: store round trips per request, ${what}, leased ≤ 0\\.1 \\| [\\d.]+ \\(×1\\), [\\d.]+ \\(×16\\) \\|`,
            'm',
          ),
        );
      }
    }
    for (const shape of ['keymanager', 'realistic']) {
      expect(report).toMatch(new RegExp(`^\\| heap per cached key, ${shape} record ≤ 0\\.5 KiB \\| \\d+ B \\|`, 'm'));
    }
  });

  it("states keygate against each framework's own no-op middleware for GET and for POST", () => {
    expect(report).toContain('## The framework path: GET and POST');
    for (const framework of ['express', 'fastify', 'hono']) {
      for (const route of ['GET /v1/ping', 'POST /v1/email/verify \\(JSON body\\)']) {
        expect(report).toMatch(
          new RegExp(
            `^\\| HTTP ${framework} ${route}: keygate / ${framework}'s own no-op middleware ≥ 0\\.95 \\| [\\d.]+ × \\|`,
            'm',
          ),
        );
      }
    }
  });

  it('sends 20,000 malformed keys without a single store lookup', () => {
    expect(report).toContain('against a store that counts every `peek` and `findByHash`: **0 lookups**');
  });

  it('keeps the negative cache within its bound under a flood of unknown keys', () => {
    expect(report).toMatch(
      /negative cache stays within its bound under 5,000 distinct unknown keys \| 5,000 of 10,000 entries \| met/,
    );
  });

  it('summarises the committed scale run with its targets', () => {
    expect(report).toContain('## A million keys');
    expect(report).toMatch(/^\| PostgreSQL: cold lookup p99 at 1,000,000 keys < 2 ms \| [\d.]+ ms \|/m);
    expect(report).toMatch(/^\| Redis: cold lookup p99 at 1,000,000 keys < 1 ms \| [\d.]+ ms \|/m);
  });

  it("profiles each keygate server beside its framework's no-op server, and splits what keygate adds by owner", () => {
    expect(report).toMatch(
      /^\| owner \| express-noop \| express-keygate \| fastify-noop \| fastify-keygate \| hono-noop \| hono-keygate \|$/m,
    );
    expect(report).toMatch(/^\| keygate(?: \| [\d.]+){6} \|$/m);
    expect(report).toContain("## Where keygate's time goes, and why a target is missed");
    for (const framework of ['express', 'fastify', 'hono']) {
      expect(report).toMatch(new RegExp(`^\\| ${framework} \\| [\\d.]+ \\((met|missed)\\) \\|`, 'm'));
    }
  });
});
