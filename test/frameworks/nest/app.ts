// Nest applications for the tests, on Express or Fastify. Runs in vitest against Nest 12 and, bundled
// by nest.test.ts into test/frameworks/nest11/, against Nest 11. Decorators are applied as functions,
// so that neither vitest nor esbuild needs TypeScript's experimentalDecorators to run them.
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import {
  Controller,
  type DynamicModule,
  Get,
  type INestApplication,
  Module,
  Post,
  Req,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { KeyStore, PublicKey } from 'keygate';
import { ApiKey, KeygateModule, type KeygateRequest } from 'keygate/nestjs';
import { routeOptions } from '../apps.js';

export type NestPlatform = 'express' | 'fastify';

/** Proxy trust as each platform spells it: the loopback proxy of the case table, or none. */
export type Trust = 'loopback' | false;

type Handler = (key: PublicKey | undefined, req: KeygateRequest) => unknown;

/** One route of a test controller: method, path, handler and the decorators on it. */
export interface TestRoute {
  method?: 'get' | 'post';
  path: string;
  handle: Handler;
  decorators?: MethodDecorator[];
}

/** A controller class with these routes; each handler gets `@ApiKey()` and `@Req()`. */
export function controller(routes: readonly TestRoute[], decorators: ClassDecorator[] = [], prefix = ''): Type {
  class TestController {}
  const proto = TestController.prototype as unknown as Record<string, unknown>;
  routes.forEach((route, i) => {
    const name = `route${i}`;
    proto[name] = (key: PublicKey | undefined, req: KeygateRequest) => route.handle(key, req);
    const descriptor = Object.getOwnPropertyDescriptor(proto, name) as PropertyDescriptor;
    ApiKey()(proto, name, 0);
    Req()(proto, name, 1);
    for (const decorate of [(route.method === 'post' ? Post : Get)(route.path), ...(route.decorators ?? [])]) {
      decorate(proto, name, descriptor);
    }
  });
  for (const decorate of [Controller(prefix), ...decorators]) decorate(TestController);
  return TestController;
}

/** An application module importing these modules, with these controllers. */
export function appModule(imports: Array<DynamicModule | Type>, controllers: Type[]): Type {
  class AppModule {}
  Module({ imports, controllers })(AppModule);
  return AppModule;
}

/** Creates (not listening) a Nest application on the platform, trusting a proxy as asked. */
export async function createNestApp(platform: NestPlatform, module: Type, trust: Trust = 'loopback') {
  const options = { logger: false as const, abortOnError: false };
  if (platform === 'fastify') {
    return NestFactory.create(
      module,
      new FastifyAdapter({ trustProxy: trust === 'loopback' ? '127.0.0.1' : false }),
      options,
    );
  }
  const app = await NestFactory.create(module, new ExpressAdapter(), options);
  (app.getHttpAdapter().getInstance() as { set(name: string, value: unknown): void }).set('trust proxy', trust);
  return app;
}

/** Listens on 127.0.0.1, port 0; returns the base URL. */
export async function listenOn(app: INestApplication): Promise<string> {
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** The key's id, as every case-table route answers. */
const echo: Handler = (key) => ({ keyId: key?.id });

/**
 * The case table's routes on one platform: one application per route (`KeygateModule.forRoot` takes
 * one set of options per application), each listening on its own port. Returns path -> base URL and a closer.
 */
export async function serveCaseRoutes(
  platform: NestPlatform,
  store: KeyStore,
): Promise<{ bases: Record<string, string>; close(): Promise<void> }> {
  const apps: INestApplication[] = [];
  const bases: Record<string, string> = {};
  for (const [path, options] of Object.entries(routeOptions(store))) {
    const module = appModule([KeygateModule.forRoot(options)], [controller([{ path, handle: echo }])]);
    const app = await createNestApp(platform, module);
    apps.push(app);
    bases[path] = await listenOn(app);
  }
  return { bases, close: async () => void (await Promise.all(apps.map((app) => app.close()))) };
}

/** One application serving the case table's `/v1/check` route, trusting a proxy as asked. */
export async function serveCheckRoute(
  platform: NestPlatform,
  store: KeyStore,
  trust: Trust,
): Promise<{ base: string; close(): Promise<void> }> {
  const options = routeOptions(store)['/v1/check'];
  const module = appModule([KeygateModule.forRoot(options)], [controller([{ path: '/v1/check', handle: echo }])]);
  const app = await createNestApp(platform, module, trust);
  return { base: await listenOn(app), close: () => app.close() };
}
