// A Worker with its own LeasedRateLimiter and LeasedCreditLedger over the Durable Object namespaces
// bound as KEYGATE_LIMITS and KEYGATE_CREDITS (the classes live in another Worker of the same
// Miniflare). Its isolate keeps them between requests, as a process keeps them between requests:
//   POST /open  { ...HammerArgs }: makes them (once per test);
//   POST /run   { n }: n requests, `concurrency` at a time; answers what `hammer` reports;
//   POST /one: one request, in its own incoming request (many at once share the isolate's slices);
//   POST /close: close() of the one in use.
import { LeasedCreditLedger, LeasedRateLimiter } from 'keygate';
import {
  DurableObjectCreditLedger,
  DurableObjectRateLimiter,
} from '../../../backends/cloudflare/durable-objects/index.js';
import type { DurableObjectNamespaceLike } from '../../../backends/cloudflare/durable-objects/workers-types.js';
import { type HammerArgs, hammer } from '../../leases/support/hammer.js';

interface Env {
  KEYGATE_LIMITS: DurableObjectNamespaceLike;
  KEYGATE_CREDITS: DurableObjectNamespaceLike;
}

let open: { args: HammerArgs; limiter: LeasedRateLimiter; ledger: LeasedCreditLedger } | undefined;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    try {
      if (path === '/open') {
        const args = (await request.json()) as HammerArgs;
        const { maxSlice, divisor } = args;
        const limiter = new LeasedRateLimiter({
          limiter: new DurableObjectRateLimiter({ namespace: env.KEYGATE_LIMITS, timeoutMs: 10_000 }),
          maxSlice,
          divisor,
          // An isolate's I/O belongs to the request that started it: no top-up may outlive /run.
          prefetch: false,
        });
        const ledger = new LeasedCreditLedger({
          ledger: new DurableObjectCreditLedger({ namespace: env.KEYGATE_CREDITS, timeoutMs: 10_000 }),
          maxSlice,
          divisor,
          prefetch: false,
          ...(args.sliceTtlMs === undefined ? {} : { sliceTtlMs: args.sliceTtlMs }),
        });
        open = { args, limiter, ledger };
        return Response.json({ ok: true });
      }
      if (!open) return Response.json({ error: 'not open' }, { status: 409 });
      if (path === '/run') {
        const { n } = (await request.json()) as { n: number };
        return Response.json(await hammer(open.args, n, open.limiter, open.ledger));
      }
      if (path === '/one') {
        // One request as an app serves it: its own incoming request, sharing the isolate's slice.
        const ran = await hammer({ ...open.args, concurrency: 1 }, 1, open.limiter, open.ledger);
        return Response.json(ran);
      }
      if (path === '/close') {
        await (open.args.mode === 'limit' ? open.limiter.close() : open.ledger.close());
        return Response.json({ ok: true });
      }
      return new Response('not found', { status: 404 });
    } catch (err) {
      return Response.json({ error: String(err) }, { status: 500 });
    }
  },
};
