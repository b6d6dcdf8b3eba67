// The load generator: a steady rate of requests (at most `concurrency` in flight; a request with no
// room is not sent and counts as `saturated`) spread over the workers, in a fixed mix of groups.
// Each group has the statuses it may get; anything else (a 5xx above all, or a network error) is
// unexpected. A key taken out of service must not be allowed by a request sent more than the
// revocation bound after the change returned (and still out of service when answered).
import type { Churn, ChurnKey } from './churn.js';
import type { Population, Route, SoakKey } from './population.js';

/** The documented bound for a change to reach every process while the change channel is up: under 1 s. */
export const REVOCATION_BOUND_MS = 1_000;

interface Pick {
  key?: string;
  route: Route;
  /** The key, when a 200 bills its account or the revocation bound applies. */
  soak?: SoakKey | ChurnKey;
}

interface Group {
  readonly name: string;
  readonly weight: number;
  readonly allowed: readonly number[];
  pick(i: number): Pick | undefined;
}

export interface TrafficTally {
  sent: number;
  answered: number;
  /** Requests not sent because `concurrency` requests were in flight (the rate was not reached). */
  saturated: number;
  networkErrors: number;
  unexpected: number;
  /** Requests allowed although sent more than the bound after their key was taken out of service. */
  lateAllows: number;
  /** Group -> status (with the problem's code) -> requests. */
  readonly byGroup: Map<string, Map<string, number>>;
  /** Status -> requests, over every group. */
  readonly byStatus: Map<number, number>;
  /** Live 200s per account: what the ledger must have charged (cost 1 each). */
  readonly served: Map<string, number>;
  readonly examples: string[];
}

export interface Traffic {
  readonly tally: TrafficTally;
  readonly groups: readonly string[];
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<void>;
}

/**
 * Starts the traffic against `bases` (each worker's `http://127.0.0.1:<port>`).
 *
 * @example
 * const traffic = startTraffic({ bases, population, churn, rps: 100, concurrency: 16 });
 * ...; await traffic.stop();
 */
export function startTraffic(options: {
  bases: readonly string[];
  population: Population;
  churn: Churn;
  rps: number;
  concurrency: number;
}): Traffic {
  const { bases, population: p, churn, rps, concurrency } = options;
  const at = <T>(list: readonly T[], i: number): T | undefined => list[i % Math.max(1, list.length)];
  const of = (key: SoakKey | undefined): Pick | undefined =>
    key && { key: key.secret, route: key.account.route, soak: key };
  const route = (i: number): Route => (i % 2 ? 'leased' : 'direct');
  const groups: Group[] = [
    { name: 'steady live key', weight: 38, allowed: [200], pick: (i) => of(at(p.steady, i)) },
    { name: 'rate-limited live key', weight: 10, allowed: [200, 429], pick: (i) => of(at(p.limited, i)) },
    { name: 'nearly dry account', weight: 5, allowed: [200, 402], pick: (i) => of(at(p.dry, i)) },
    { name: 'test key', weight: 10, allowed: [200], pick: (i) => of(at(p.test, i)) },
    { name: 'changing key', weight: 18, allowed: [200, 401, 403, 429], pick: (i) => of(at(churn.pool, i)) },
    { name: 'retired key', weight: 4, allowed: [200, 401, 403], pick: (i) => of(at(churn.retired, i)) },
    {
      name: 'unknown key',
      weight: 7,
      allowed: [401],
      pick: (i) => ({ key: at(p.unknown, i), route: route(i) }),
    },
    {
      name: 'malformed key',
      weight: 5,
      allowed: [401],
      pick: (i) => {
        const secret = at(p.steady, i)?.secret ?? '';
        return { key: `${secret.slice(0, -1)}${secret.endsWith('0') ? '1' : '0'}`, route: route(i) };
      },
    },
    { name: 'no key', weight: 3, allowed: [401], pick: (i) => ({ route: route(i) }) },
  ];
  // A cycle of 100 slots with each group's slots spread evenly over it, not in one block.
  const cycle = groups
    .flatMap((g) => Array.from({ length: g.weight }, (_, k) => ({ g, at: (k + 0.5) / g.weight })))
    .sort((a, b) => a.at - b.at)
    .map((slot) => slot.g);
  const tally: TrafficTally = {
    sent: 0,
    answered: 0,
    saturated: 0,
    networkErrors: 0,
    unexpected: 0,
    lateAllows: 0,
    byGroup: new Map(groups.map((g) => [g.name, new Map()])),
    byStatus: new Map(),
    served: new Map(),
    examples: [],
  };
  const example = (line: string) => {
    if (tally.examples.length < 10) tally.examples.push(line);
  };

  let inFlight = 0;
  let next = 0;
  const idle: (() => void)[] = [];

  // Each group's own count picks its next key, so that a group's requests go round its keys.
  const picked = new Map<Group, number>();
  async function one(i: number): Promise<void> {
    const group = cycle[i % cycle.length] as Group;
    const turn = picked.get(group) ?? 0;
    picked.set(group, turn + 1);
    const pick = group.pick(turn);
    if (!pick) return;
    // The worker changes with every cycle too, so that each slot of the cycle reaches every worker.
    const base = bases[(i + Math.floor(i / cycle.length)) % bases.length] as string;
    const headers: Record<string, string> = pick.key === undefined ? {} : { 'x-api-key': pick.key };
    const blocked = (pick.soak as ChurnKey | undefined)?.blockedSince;
    const sentAt = performance.now();
    tally.sent++;
    inFlight++;
    try {
      const response = await fetch(`${base}/${pick.route}/v1/verify`, { headers });
      const body = await response.text();
      tally.answered++;
      const status = response.status;
      let label = String(status);
      if (status !== 200) {
        try {
          label += ` ${(JSON.parse(body) as { code?: string }).code ?? ''}`;
        } catch {
          // Not problem+json: the status alone.
        }
      }
      const counts = tally.byGroup.get(group.name) as Map<string, number>;
      counts.set(label, (counts.get(label) ?? 0) + 1);
      tally.byStatus.set(status, (tally.byStatus.get(status) ?? 0) + 1);
      if (!group.allowed.includes(status)) {
        tally.unexpected++;
        example(`${group.name}: got ${label}`);
      }
      if (status === 200 && pick.soak?.live) {
        const account = pick.soak.account.id;
        tally.served.set(account, (tally.served.get(account) ?? 0) + 1);
      }
      const stillBlocked = blocked !== undefined && (pick.soak as ChurnKey).blockedSince === blocked;
      if (status === 200 && stillBlocked && sentAt > blocked + REVOCATION_BOUND_MS) {
        tally.lateAllows++;
        example(`${group.name}: allowed ${(sentAt - blocked).toFixed(0)} ms after it was taken out of service`);
      }
    } catch (err) {
      tally.networkErrors++;
      example(`${group.name}: network error ${String(err)}`);
    } finally {
      inFlight--;
      if (inFlight === 0) for (const resolve of idle.splice(0)) resolve();
    }
  }

  // Sends what the rate allows since the last tick, so a late timer does not lower the rate.
  let last = performance.now();
  let credit = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    credit += ((now - last) * rps) / 1000;
    last = now;
    while (credit >= 1) {
      credit--;
      if (inFlight >= concurrency) {
        tally.saturated++;
        continue;
      }
      void one(next++);
    }
  }, 10);

  return {
    tally,
    groups: groups.map((g) => g.name),
    async stop() {
      clearInterval(timer);
      if (inFlight > 0) await new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}
