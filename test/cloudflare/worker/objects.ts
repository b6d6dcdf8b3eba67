// A Worker that exports keygate's Durable Object classes, for the tests to drive them from Node.
import {
  type DurableObjectStateLike,
  KeygateCreditObject,
} from '../../../backends/cloudflare/durable-objects/index.js';

export { KeygateCreditObject, KeygateRateLimitObject } from '../../../backends/cloudflare/durable-objects/index.js';

/**
 * A credit object that prunes its closed holds 300 ms after they close, as a Worker configures one (a
 * subclass), and answers `POST /holdState` (`{ args: [innerHoldId] }`) with the state its storage
 * keeps for that hold (`null` when none), read around the ledger.
 */
export class PruningCreditObject extends KeygateCreditObject {
  private readonly storage: DurableObjectStateLike['storage'];

  constructor(ctx: DurableObjectStateLike, env?: unknown) {
    super(ctx, env, { pruneHoldsAfterMs: 300 });
    this.storage = ctx.storage;
  }

  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== '/holdState') return super.fetch(request);
    const { args } = (await request.json()) as { args: [string] };
    const row = this.storage.sql?.exec('SELECT state FROM keygate_credit_holds WHERE id = ?', args[0]).toArray()[0];
    return Response.json({ value: row?.state ?? null });
  }
}

/** An object that never answers: what a client meets when its object hangs. */
export class StuckObject {
  fetch(): Promise<Response> {
    return new Promise(() => {});
  }
}

export default {
  fetch(): Response {
    return new Response('keygate durable objects', { status: 404 });
  },
};
