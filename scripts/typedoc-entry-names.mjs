// TypeDoc plugin: names each documented module by the import a user writes (`keygate/fetch`), not
// by its source folder (`frameworks/fetch`).
import { Converter, ReflectionKind } from 'typedoc';

const NAMES = {
  src: 'keygate',
  'src/testing': 'keygate/testing',
  'src/adapter-kit': 'keygate/adapter-kit',
  'src/store-kit': 'keygate/store-kit',
  webhooks: 'keygate/webhooks',
  'frameworks/express': 'keygate/express',
  'frameworks/fastify': 'keygate/fastify',
  'frameworks/fetch': 'keygate/fetch',
  'frameworks/hono': 'keygate/hono',
  'frameworks/koa': 'keygate/koa',
  'frameworks/elysia': 'keygate/elysia',
  'frameworks/nestjs': 'keygate/nestjs',
  'frameworks/next': 'keygate/next',
  'backends/postgres': 'keygate/postgres',
  'backends/redis': 'keygate/redis',
  'backends/mysql': 'keygate/mysql',
  'backends/sqlite': 'keygate/sqlite',
  'backends/drizzle': 'keygate/drizzle',
  'backends/cloudflare': 'keygate/cloudflare',
  otel: 'keygate/otel',
  dashboard: 'keygate/dashboard',
  leaks: 'keygate/leaks',
};

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
      module.name = NAMES[module.name] ?? module.name;
    }
  });
}
