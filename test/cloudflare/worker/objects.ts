// A Worker that exports keygate's Durable Object classes, for the tests to drive them from Node.
export { KeygateCreditObject, KeygateRateLimitObject } from '../../../backends/cloudflare/durable-objects/index.js';

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
