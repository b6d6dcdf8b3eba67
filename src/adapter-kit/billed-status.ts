// The release status: what `finishCredits` closes a hold with when nothing was served.
const RELEASE = 500;

/**
 * The status to close a credit hold with (`finishCredits`): the response's own, except that a 404
 * answered while no route matched (the framework's not-found answer) releases the hold as a 5xx
 * does. No route, no charge: a client that mistypes a path pays nothing, while a route that answers
 * 404 for a missing resource was served and is charged. How "no route matched" is known is each
 * framework's own (Express's `req.route`, Fastify's `request.is404`, ...).
 *
 * @param status the response's status code
 * @param routed whether a route of the application matched the request
 * @example
 * void finishCredits(result, statusToBill(res.statusCode, req.route !== undefined), auth);
 */
export function statusToBill(status: number, routed: boolean): number {
  return status === 404 && !routed ? RELEASE : status;
}
