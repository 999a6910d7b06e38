// Calls that wait for a pause: a burst of triggers (keystrokes, metadata changes, file opens)
// runs the action once, `delayMs` after the last one.

import { WINDOW_TIMERS, type Timers } from "./client";

export class Debouncer {
  private handle: number | null = null;

  constructor(
    private readonly action: () => void,
    private readonly delayMs: number,
    private readonly timers: Timers = WINDOW_TIMERS,
  ) {}

  /** (Re)starts the countdown. */
  trigger(): void {
    this.cancel();
    this.handle = this.timers.set(() => {
      this.handle = null;
      this.action();
    }, this.delayMs);
  }

  get pending(): boolean {
    return this.handle !== null;
  }

  /** Runs a pending action now (nothing when none is pending). */
  flush(): void {
    if (this.handle !== null) {
      this.cancel();
      this.action();
    }
  }

  cancel(): void {
    if (this.handle !== null) {
      this.timers.clear(this.handle);
      this.handle = null;
    }
  }
}

/**
 * Debounced asynchronous lookups for a suggestion list: every call returns a promise, but only
 * the last call of a burst is looked up, and every caller of the burst gets that last answer
 * (a slower earlier answer never overwrites a newer one).
 */
export class LatestLookup<Q, R> {
  private waiting: Array<(result: R) => void> = [];
  private generation = 0;
  private readonly debouncer: Debouncer;
  private query: Q | null = null;

  constructor(
    private readonly lookup: (query: Q) => Promise<R>,
    delayMs: number,
    private readonly idle: R,
    timers: Timers = WINDOW_TIMERS,
  ) {
    this.debouncer = new Debouncer(() => void this.run(), delayMs, timers);
  }

  get(query: Q): Promise<R> {
    this.generation += 1;
    this.query = query;
    const answer = new Promise<R>((resolve) => this.waiting.push(resolve));
    this.debouncer.trigger();
    return answer;
  }

  /** Answers everyone still waiting with `idle` and looks nothing up (the list was closed). */
  cancel(): void {
    this.debouncer.cancel();
    this.generation += 1;
    this.answer(this.idle);
  }

  private async run(): Promise<void> {
    const generation = this.generation;
    let result: R;
    try {
      result = await this.lookup(this.query as Q);
    } catch {
      result = this.idle;
    }
    if (generation === this.generation) {
      this.answer(result);
    }
  }

  private answer(result: R): void {
    for (const resolve of this.waiting.splice(0)) {
      resolve(result);
    }
  }
}
