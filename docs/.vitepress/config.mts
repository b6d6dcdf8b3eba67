import { existsSync } from 'node:fs';
import { defineConfig } from 'vitepress';
import { apiReferenceLinks, sourceFileLinks } from './links.mts';

// Generated before `vitepress build` by `npm run docs:build` (gitignored): the bundle-size table
// (scripts/size.mjs --markdown) and the API reference (TypeDoc, into public/api).
const generated = ['.generated/bundle-size.md', 'public/api/index.html'];
const missing = generated.filter((file) => !existsSync(new URL(`../${file}`, import.meta.url)));
if (missing.length > 0) {
  throw new Error(`docs/${missing.join(', docs/')} missing: run \`npm run docs:build\`, which generates them first`);
}

export default defineConfig({
  title: 'keygate',
  description:
    'API-key authentication for TypeScript HTTP APIs: a framework-agnostic core, Express, Fastify, Fetch and Hono adapters, PostgreSQL, PGlite and Redis backends, a dashboard and a CLI.',
  lang: 'en',
  cleanUrls: false,
  lastUpdated: false,
  // Dead links fail the build (VitePress's default); links into the API reference are checked too.
  ignoreDeadLinks: false,
  markdown: {
    config(md) {
      md.use(apiReferenceLinks).use(sourceFileLinks);
    },
  },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'Frameworks', link: '/frameworks/' },
      { text: 'Backends', link: '/backends/' },
      { text: 'Extending', link: '/extending/writing-a-backend' },
      { text: 'Benchmarks', link: '/benchmarks/' },
      { text: 'API reference', link: '/api/index.html', target: '_self' },
    ],
    sidebar: [
      {
        text: 'Guide',
        items: [
          { text: 'Getting started', link: '/guide/getting-started' },
          { text: 'Key format and check order', link: '/guide/requests' },
          { text: 'Allow lists and client addresses', link: '/guide/allow-lists' },
          { text: 'Key management', link: '/guide/key-management' },
          { text: 'The dashboard', link: '/guide/dashboard' },
          { text: 'Rate limits', link: '/guide/rate-limits' },
          { text: 'Prepaid credits', link: '/guide/credits' },
          { text: 'Webhooks', link: '/guide/webhooks' },
          { text: 'Leaked keys: GitHub secret scanning', link: '/guide/leaks' },
          { text: 'Failed-attempt throttling', link: '/guide/failed-attempts' },
          { text: 'Usage and spike alerts', link: '/guide/usage-and-alerts' },
          { text: 'Retention: what each store keeps', link: '/guide/retention' },
          { text: 'Telemetry', link: '/guide/telemetry' },
          { text: 'The CLI', link: '/guide/cli' },
          { text: 'Security model', link: '/guide/security' },
          { text: 'Security reviews and the soak run', link: '/security/reviews' },
          { text: 'The soak: running for months', link: '/guide/soak' },
          { text: 'The example service', link: '/guide/example-service' },
        ],
      },
      {
        text: 'Frameworks',
        items: [
          { text: 'What every adapter shares', link: '/frameworks/' },
          { text: 'Express', link: '/frameworks/express' },
          { text: 'Fastify', link: '/frameworks/fastify' },
          { text: 'Fetch: Workers, Deno, Bun, Next.js', link: '/frameworks/fetch' },
          { text: 'Hono', link: '/frameworks/hono' },
          { text: 'Koa', link: '/frameworks/koa' },
          { text: 'Elysia', link: '/frameworks/elysia' },
          { text: 'NestJS', link: '/frameworks/nestjs' },
          { text: 'Next.js middleware', link: '/frameworks/next' },
        ],
      },
      {
        text: 'Backends',
        items: [
          { text: 'Choosing a backend', link: '/backends/' },
          { text: 'Memory', link: '/backends/memory' },
          { text: 'PostgreSQL and PGlite', link: '/backends/postgres' },
          { text: 'Redis', link: '/backends/redis' },
          { text: 'MySQL and MariaDB', link: '/backends/mysql' },
          { text: 'SQLite', link: '/backends/sqlite' },
          { text: 'Cloudflare Workers: D1, KV, Durable Objects', link: '/backends/cloudflare' },
          { text: 'Drizzle', link: '/backends/drizzle' },
          { text: 'Caching and revocation', link: '/backends/caching' },
        ],
      },
      {
        text: 'Extending keygate',
        items: [
          { text: 'Writing a backend', link: '/extending/writing-a-backend' },
          { text: 'Writing a framework adapter', link: '/extending/writing-a-framework-adapter' },
        ],
      },
      {
        text: 'Benchmarks',
        items: [
          { text: 'Overview and bundle size', link: '/benchmarks/' },
          { text: 'The request path', link: '/benchmarks/request-path' },
          { text: 'A million keys', link: '/benchmarks/scale' },
          { text: 'Prepaid credits', link: '/benchmarks/credits' },
          { text: 'The dashboard', link: '/benchmarks/dashboard' },
          { text: 'Memory per key and the framework path', link: '/benchmarks/memory-and-frameworks' },
          { text: 'NestJS, Koa, Elysia, Next.js', link: '/benchmarks/frameworks' },
          { text: 'MySQL, SQLite, Cloudflare, leases', link: '/benchmarks/backends' },
        ],
      },
      {
        text: 'Reference',
        items: [
          { text: 'Entry points and API reference', link: '/reference/api' },
          { text: 'Development', link: '/reference/development' },
        ],
      },
    ],
    outline: { level: [2, 3] },
    search: { provider: 'local' },
  },
});
