// The one interface of the two ways a delivery is sent (package.json `imports`, `#webhook-send`):
// Node's, which checks every address a name resolves to and connects to the one it checked, and the
// Fetch API's, for Workers and the other runtimes, which can check the URL's host only.

/**
 * How a name is resolved: every address it has. Each one is checked before any is connected to.
 *
 * @example
 * const resolve: ResolveHost = async () => [{ address: '93.184.215.14', family: 4 }];
 */
export type ResolveHost = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

/** One POST of one delivery. */
export interface SendArgs {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Aborted at the attempt's deadline. */
  readonly signal: AbortSignal;
  /** Connect to internal addresses too (the operator's development switch). */
  readonly allowPrivateNetworks: boolean;
  /** Overrides the runtime's resolver (Node only). */
  readonly resolve: ResolveHost | undefined;
}

/** Sends, and resolves to the response's status (its body unread), or throws. */
export type SendWebhook = (args: SendArgs) => Promise<number>;
