import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { PublicKey } from 'keygate';
import { resolveAuthOptions } from 'keygate/adapter-kit';
import type { KeygateRequest } from './types.js';

// Nest metadata keys, read by the guard with Nest's Reflector on the handler and then its controller.
export const PUBLIC_KEY = 'keygate:public';
export const PERMISSIONS_KEY = 'keygate:permissions';

/**
 * Marks a route, or every route of a controller, as open: the guard lets it through without a key
 * (`@ApiKey()` is `undefined` there, and nothing is rate-limited or billed).
 *
 * @example
 * ```ts
 * @Public()
 * @Get('health')
 * health() { return { up: true }; }
 * ```
 */
export function Public(): ClassDecorator & MethodDecorator {
  return SetMetadata(PUBLIC_KEY, true);
}

/**
 * Requires these permissions on a route or controller, on top of the ones `KeygateModule.forRoot`
 * requires (a key missing one gets 403 `insufficient_permissions`). On a controller and on one of its
 * routes, the route needs both sets. Bad permissions throw `InvalidInputError` (field `permissions`)
 * where the decorator is applied, when the class is defined.
 *
 * @example
 * ```ts
 * @RequirePermissions('email:verify')
 * @Post('verify')
 * verify(@Body() body: { email: string }) { ... }
 * ```
 */
export function RequirePermissions(...permissions: string[]): ClassDecorator & MethodDecorator {
  resolveAuthOptions({ permissions });
  return SetMetadata(PERMISSIONS_KEY, permissions);
}

/**
 * A parameter decorator giving the authenticated key's public view (`PublicKey`: id, account,
 * mode, permissions, ...; never the secret or its hash). `undefined` on a `Public()` route.
 *
 * @example
 * ```ts
 * @Get('me')
 * me(@ApiKey() key: PublicKey) { return { account: key.accountId, mode: key.mode }; }
 * ```
 */
export const ApiKey: () => ParameterDecorator = createParamDecorator(
  (_data: unknown, context: ExecutionContext): PublicKey | undefined =>
    context.switchToHttp().getRequest<KeygateRequest>().apiKey,
);
