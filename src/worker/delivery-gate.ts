/**
 * Lets at most `limit` answered messages post their replies at once; the others wait their
 * turn in the order their answers came in.
 *
 * Why: when many slow agent calls end together (a prefilled queue, a burst after an outage),
 * every job would post its reply, finish and fetch its next job in lockstep. Each step of each
 * job then waits behind the same step of all the others, so all of them reach the end at
 * about the same time, their next calls start together and end together again: the worker is
 * swamped for a second, then idle while every call waits at the agent. Taken a few at a time,
 * the first replies go out at once and those jobs go back to the agent while the rest post,
 * so the calls spread out, and the event loop stays free for lock renewals and health checks.
 * Measured at 2,000 calls in flight with a 2 s agent (three same-minute pairs): 11% more
 * replies per second, and the worker's event-loop delay p99 at 82–95 ms instead of 191–323 ms
 * (docs/benchmark.md). 64 places did better there than 32 or 128.
 *
 * A post may be slow for reasons of its own (discord.js waits out a channel's rate limit inside
 * its REST queue). One holds its place at most `maxHoldMs`; then the next reply goes, so one
 * channel's slow posts never hold up the others' for longer than that.
 */
/** The worker's places, and how long one post keeps its place (measured: docs/benchmark.md). */
export const DELIVERY_PLACES = 64;
export const DELIVERY_MAX_HOLD_MS = 250;

export class DeliveryGate {
  /** Places held, oldest first (a Set keeps insertion order, and places are given in time order). */
  private readonly holders = new Set<Place>();
  /** Replies waiting for a place, oldest at `head`. */
  private waiters: Array<(place: Place) => void> = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param limit replies posting at once; 0 turns the gate off
   * @param maxHoldMs how long one reply keeps its place before the next one may go
   */
  constructor(
    private readonly limit: number,
    private readonly maxHoldMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Replies waiting for a place now. */
  get waiting(): number {
    return this.waiters.length - this.head;
  }

  /** Runs `post` once a place is free, and frees it when `post` settles (or after `maxHoldMs`). */
  async run<T>(post: () => Promise<T>): Promise<T> {
    if (this.limit <= 0) return post();
    const place = this.holders.size < this.limit ? this.give() : await new Promise<Place>((resolve) => this.wait(resolve));
    try {
      return await post();
    } finally {
      this.free(place);
    }
  }

  private give(): Place {
    const place: Place = { since: this.now(), expired: false };
    this.holders.add(place);
    return place;
  }

  private wait(resolve: (place: Place) => void): void {
    this.waiters.push(resolve);
    this.arm();
  }

  /** A place is handed over at once, so no newcomer takes it between the free and the waiter's turn. */
  private handOver(): void {
    if (this.head === this.waiters.length) return;
    const next = this.waiters[this.head]!;
    this.waiters[this.head++] = undefined as never;
    if (this.head === this.waiters.length) {
      this.waiters = [];
      this.head = 0;
    }
    next(this.give());
  }

  private free(place: Place): void {
    if (place.expired) return;
    this.holders.delete(place);
    this.handOver();
  }

  /** While replies wait, a timer takes back the places held past `maxHoldMs`. */
  private arm(): void {
    if (this.timer || this.waiting === 0) return;
    const oldest = this.holders.values().next().value as Place | undefined;
    const due = oldest ? Math.max(1, oldest.since + this.maxHoldMs - this.now()) : 1;
    this.timer = setTimeout(() => this.expire(), due);
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    const now = this.now();
    for (const place of this.holders) {
      if (this.waiting === 0 || now - place.since < this.maxHoldMs) break;
      place.expired = true;
      this.holders.delete(place);
      this.handOver();
    }
    this.arm();
  }
}

interface Place {
  since: number;
  /** Its holder took too long and the place went to the next reply. */
  expired: boolean;
}
