/**
 * What the leasing engine keeps of every slice, whatever it is a slice of (a limiter's units, a
 * ledger's credits): when it is topped up, and the takes in flight for it.
 *
 * @example
 * const slice: LeaseSlice = { refillAt: 150 };
 */
export interface LeaseSlice {
  /** When what is left of the slice falls to this, the next is taken in the background (-1: not before a request needs it). */
  refillAt: number;
  /** A take in flight for the slice's owner: requests the slice cannot cover wait for it rather than take again. */
  taking?: Promise<void>;
  /** The background top-up in flight, if any: it settles within the wrapper's `timeoutMs`. */
  refilling?: Promise<void>;
}

/**
 * Marks a take in flight on `slice` (its `taking`), for the requests it cannot cover to wait for;
 * returns the function that ends it and wakes them, to call once, whether the take succeeded or not.
 *
 * @example
 * const finish = beginTake(slice); // ... finish();
 */
export function beginTake(slice: LeaseSlice): () => void {
  let done!: () => void;
  slice.taking = new Promise<void>((resolve) => {
    done = resolve;
  });
  return () => {
    slice.taking = undefined;
    done();
  };
}

/**
 * The live slice of every owner (a rate-limited key; an account and key), at most `max` of them:
 * placing one more evicts the least recently placed or used one that no take is filling, and hands
 * it to `evicted` (to give back what it holds). Iteration is in that order, least recent first; `set`
 * puts a slice in the place of the owner's previous one.
 *
 * @example
 * const slices = new SliceStore<Slice>(10_000, (keyId, slice) => void giveBack(keyId, slice));
 * slices.place('key_1', slice);
 * slices.use('key_1', slice); // now the most recent
 */
export class SliceStore<S extends LeaseSlice> extends Map<string, S> {
  // Insertion order is recency (deleted and set again on use). The owner last moved to the end: an
  // owner used again and again keeps its place with no delete and set per request. It may name an
  // owner deleted since, harmlessly: one set again goes to the end.
  private last: string | undefined;

  /**
   * @param max the most owners kept (default: no bound)
   * @param evicted what to do with a slice evicted to make room
   */
  constructor(
    private readonly max = Number.POSITIVE_INFINITY,
    private readonly evicted: (owner: string, slice: S) => void = () => {},
  ) {
    super();
  }

  /** Marks the owner's slice the most recent. */
  use(owner: string, slice: S): void {
    if (this.last === owner) return;
    this.delete(owner);
    this.set(owner, slice);
    this.last = owner;
  }

  /** Makes `slice` the owner's as its most recent, evicting the least recent owner's (one no take fills) when full. */
  place(owner: string, slice: S): void {
    if (this.size >= this.max) {
      for (const [oldest, evicted] of this) {
        if (evicted.taking) continue;
        this.delete(oldest);
        this.evicted(oldest, evicted);
        break;
      }
    }
    this.set(owner, slice);
    this.last = owner;
  }
}
