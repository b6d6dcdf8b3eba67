// keygate on NestJS: one module import guards every route; a verify route that needs a permission,
// a health route without a key. `main.ts` serves it; test/examples/nestjs drives it.
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, type INestApplication, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CachedKeyStore, type CreatedKey, KeyManager, MemoryKeyStore, type PublicKey } from 'keygate';
import { ApiKey, KeygateModule, Public, RequirePermissions } from 'keygate/nestjs';

@Controller('v1/email')
class VerifyController {
  // On top of the module's permissions (none here): a key without email:verify gets 403.
  @RequirePermissions('email:verify')
  @Post('verify')
  @HttpCode(200)
  verify(@Body() body: { email?: unknown } | undefined, @ApiKey() key: PublicKey) {
    const email = typeof body?.email === 'string' ? body.email : '';
    return {
      email,
      result: /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) ? 'valid_syntax' : 'invalid_syntax',
      mode: key.mode,
    };
  }
}

// Every route of this controller answers without a key.
@Public()
@Controller()
class HealthController {
  @Get('health')
  health() {
    return { up: true };
  }
}

/**
 * Builds the application (not listening yet) around a memory store holding one test key.
 *
 * @example
 * const { app, demo } = await build();
 * await app.listen(3000, '127.0.0.1');
 */
export async function build(): Promise<{ app: INestApplication; demo: CreatedKey }> {
  const store = new MemoryKeyStore();
  const keys = new KeyManager({ store });
  const demo = await keys.create({ accountId: 'acct_demo', name: 'demo', mode: 'test', permissions: ['email:verify'] });

  @Module({
    imports: [KeygateModule.forRoot({ store: new CachedKeyStore(store) })],
    controllers: [VerifyController, HealthController],
  })
  class AppModule {}

  // Express by default; NestFactory.create(AppModule, new FastifyAdapter()) runs the same module on Fastify.
  // No proxy in front: X-Forwarded-For must not count. Behind one, name it: app.set('trust proxy', '10.0.0.2').
  const app = await NestFactory.create(AppModule, { logger: ['error', 'warn'] });
  return { app, demo };
}
