// NestJS A/B: Nest on Express and on Fastify, bare, with a no-op global guard, and with keygate's
// guard (KeygateModule.forRoot), GET and POST with a JSON body, each server in its own process on
// 127.0.0.1, loaded by autocannon from this process in alternated rounds (A B C ...; every other round
// reversed). Reports median req/s and the ratios against bare and against the no-op guard, and
// writes bench/NESTJS.md. Uses the built package: `npm run build` first.
//   node bench/nestjs.mjs [--rounds 5] [--seconds 5] [--warmup 2] [--connections 32]
//   node bench/nestjs.mjs serve <platform>-<guard>     (a server: prints {"port":N})
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { generateKey } from 'keygate';
import { BODY, keyStoreWith, PERMISSION, ROUTE } from './fixture.mjs';
import { pinLoadGenerator } from './http.mjs';

const PLATFORMS = ['express', 'fastify'];
const GUARDS = ['bare', 'noop', 'keygate'];
const VARIANTS = PLATFORMS.flatMap((p) => GUARDS.map((g) => `${p}-${g}`));
const METHODS = ['GET', 'POST'];
/** The POST body: a small batch, as the e-mail verification API takes it. */
const POST_BODY = JSON.stringify({ emails: ['ada@example.com', 'grace@example.com', 'alan@example.com'] });

async function serve(variant) {
  await import('reflect-metadata');
  const { Body, Controller, Get, HttpCode, Module, Post } = await import('@nestjs/common');
  const { APP_GUARD, NestFactory } = await import('@nestjs/core');
  const { ExpressAdapter } = await import('@nestjs/platform-express');
  const { FastifyAdapter } = await import('@nestjs/platform-fastify');
  const { KeygateModule } = await import('keygate/nestjs');
  const [platform, guard] = variant.split('-');
  const payload = JSON.parse(BODY);

  class Ping {
    get() {
      return payload;
    }
    post(body) {
      return { ...payload, items: Array.isArray(body?.emails) ? body.emails.length : 0 };
    }
  }
  const method = (name) => Object.getOwnPropertyDescriptor(Ping.prototype, name);
  Controller()(Ping);
  Get(ROUTE)(Ping.prototype, 'get', method('get'));
  Body()(Ping.prototype, 'post', 0);
  Post(ROUTE)(Ping.prototype, 'post', method('post'));
  HttpCode(200)(Ping.prototype, 'post', method('post'));

  // The no-op guard: a global guard that lets everything through, what any guard costs Nest.
  class AllowAll {
    canActivate() {
      return true;
    }
  }
  const imports = [];
  const providers = [];
  if (guard === 'noop') providers.push({ provide: APP_GUARD, useClass: AllowAll });
  if (guard === 'keygate') {
    const store = await keyStoreWith(process.env.BENCH_KEY);
    imports.push(KeygateModule.forRoot({ store, permissions: [PERMISSION] }));
  }
  class App {}
  Module({ imports, providers, controllers: [Ping] })(App);
  const adapter = platform === 'fastify' ? new FastifyAdapter() : new ExpressAdapter();
  const app = await NestFactory.create(App, adapter, { logger: false });
  await app.listen(0, '127.0.0.1');
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
  console.log(JSON.stringify({ port: app.getHttpServer().address().port }));
}

async function start(variant, key, pinned) {
  const argv = [process.execPath, new URL(import.meta.url).pathname, 'serve', variant];
  const [command, ...args] = pinned ? ['taskset', '-c', '0', ...argv] : argv;
  const child = spawn(command, args, { env: { ...process.env, BENCH_KEY: key }, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = await Promise.race([
    once(createInterface({ input: child.stdout }), 'line'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`server ${variant} exited with ${code}`))),
  ]);
  return { variant, child, url: `http://127.0.0.1:${JSON.parse(line).port}${ROUTE}` };
}

function request(method, key) {
  const headers = { 'x-api-key': key };
  if (method === 'GET') return { method, headers };
  return { method, headers: { ...headers, 'content-type': 'application/json' }, body: POST_BODY };
}

async function load(autocannon, url, method, key, seconds, connections) {
  return autocannon({ url, connections, duration: seconds, ...request(method, key) });
}

/** Refuses to measure a server that does not answer the key with 200 (and keygate's, no key with 401). */
async function verify(server, key) {
  for (const method of METHODS) {
    const { headers, body } = request(method, key);
    const ok = await fetch(server.url, { method, headers, body });
    const none = await fetch(server.url, { method, headers: { 'content-type': 'application/json' }, body });
    const wantNone = server.variant.endsWith('-keygate') ? 401 : 200;
    if (ok.status !== 200 || none.status !== wantNone) {
      throw new Error(`${server.variant} ${method}: key -> ${ok.status}, no key -> ${none.status}`);
    }
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function main() {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '5' },
      seconds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '32' },
    },
  });
  const [rounds, seconds, warmup, connections] = [values.rounds, values.seconds, values.warmup, values.connections].map(
    Number,
  );
  const { default: autocannon } = await import('autocannon');
  const key = generateKey({ mode: 'live' });
  const pinned = pinLoadGenerator();
  const loadBefore = os.loadavg()[0];
  const servers = [];
  const rps = Object.fromEntries(VARIANTS.flatMap((v) => METHODS.map((m) => [`${v} ${m}`, []])));
  try {
    for (const v of VARIANTS) servers.push(await start(v, key, pinned));
    for (const s of servers) await verify(s, key);
    for (const s of servers) for (const m of METHODS) await load(autocannon, s.url, m, key, warmup, connections);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? servers : [...servers].reverse();
      for (const s of order) {
        for (const m of METHODS) {
          const res = await load(autocannon, s.url, m, key, seconds, connections);
          const bad = res.non2xx + res.errors + res.timeouts;
          if (bad > 0) throw new Error(`${s.variant} ${m}: ${bad} requests did not get a 2xx answer`);
          const perSecond = res.requests.total / ((res.finish - res.start) / 1000);
          rps[`${s.variant} ${m}`].push(perSecond);
          console.error(`round ${r + 1}/${rounds} ${s.variant} ${m}: ${Math.round(perSecond)} req/s`);
        }
      }
    }
  } finally {
    for (const s of servers) s.child.kill('SIGTERM');
  }
  const loadAfter = os.loadavg()[0];
  writeFileSync(
    new URL('./NESTJS.md', import.meta.url),
    report({ rps, rounds, seconds, warmup, connections, pinned, loadBefore, loadAfter }),
  );
  console.log(report({ rps, rounds, seconds, warmup, connections, pinned, loadBefore, loadAfter }));
}

function report({ rps, rounds, seconds, warmup, connections, pinned, loadBefore, loadAfter }) {
  const { version: nest } = JSON.parse(
    // Nest's own package.json is not in its exports map: read it from the installed folder.
    readFileSync(new URL('../node_modules/@nestjs/core/package.json', import.meta.url)),
  );
  const m = (variant, method) => median(rps[`${variant} ${method}`]);
  const rows = PLATFORMS.flatMap((p) =>
    METHODS.map((method) => {
      const [bare, noop, keygate] = GUARDS.map((g) => m(`${p}-${g}`, method));
      const pct = (x) => `${(x * 100).toFixed(1)} %`;
      return `| ${p} | ${method} | ${Math.round(bare)} | ${Math.round(noop)} | ${Math.round(keygate)} | ${pct(noop / bare)} | ${pct(keygate / bare)} | ${pct(keygate / noop)} |`;
    }),
  );
  const cpu = os.cpus();
  return [
    '# keygate/nestjs: requests per second',
    '',
    `\`node bench/nestjs.mjs --rounds ${rounds} --seconds ${seconds} --warmup ${warmup} --connections ${connections}\``,
    `(after \`npm run build\`) on ${cpu.length} × ${cpu[0]?.model ?? 'CPU'}, Node ${process.version}, NestJS ${nest},`,
    `${new Date().toISOString().slice(0, 10)}. Load average (1 min) ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after;`,
    `servers ${pinned ? 'pinned to CPU 0, autocannon to CPU 1' : 'not pinned (taskset unavailable or one CPU)'}.`,
    '',
    'Each server is its own process on 127.0.0.1 with one route (`/v1/ping`): `bare` is Nest alone,',
    '`noop` adds a global guard that returns `true` (what any guard costs Nest), `keygate` imports',
    '`KeygateModule.forRoot({ store, permissions })` over a warm `CachedKeyStore` holding the key. GET',
    'answers a small JSON object; POST parses a JSON body of three addresses. Medians over the rounds,',
    'which alternate the servers.',
    '',
    '| platform | method | bare req/s | no-op guard req/s | keygate req/s | no-op / bare | keygate / bare | keygate / no-op |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    'On a shared machine the figures move between runs by several per cent; compare the ratios of one',
    'run, not figures across runs.',
    '',
  ].join('\n');
}

if (process.argv[2] === 'serve') await serve(process.argv[3]);
else await main();
