// TypeDoc plugin: names each documented module by the import a user writes (`keygate/fetch`), not
// by its source folder (`adapters/fetch`).
import { Converter, ReflectionKind } from 'typedoc';

const NAMES = {
  src: 'keygate',
  'src/testing': 'keygate/testing',
  'src/http': 'keygate/adapter-kit',
  'src/store-kit': 'keygate/store-kit',
  'adapters/express': 'keygate/express',
  'adapters/fastify': 'keygate/fastify',
  'adapters/fetch': 'keygate/fetch',
  'adapters/hono': 'keygate/hono',
  'adapters/postgres': 'keygate/postgres',
  'adapters/redis': 'keygate/redis',
  'adapters/otel': 'keygate/otel',
  dashboard: 'keygate/dashboard',
};

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
      module.name = NAMES[module.name] ?? module.name;
    }
  });
}
