/**
 * What aborts every upstream request of one merged watch. Its AbortSignal (with its listener maps, ≈ 0.5
 * KiB) is made when a request needs one: the start's opens, a resume's open or backoff. An idle merged
 * watch needs none (its readings are ended by the merged stream's close, see hold.ts), so the start's is
 * let go once every open has answered, and an idle watch keeps this object only.
 */
export class Upstreams {
  private ctl: AbortController | undefined;
  private over = false;

  get aborted(): boolean {
    return this.over;
  }

  /** the signal of what is under way now (made aborted after the abort) */
  get signal(): AbortSignal {
    if (!this.ctl) {
      this.ctl = new AbortController();
      if (this.over) this.ctl.abort();
    }
    return this.ctl.signal;
  }

  abort(): void {
    if (this.over) return;
    this.over = true;
    this.ctl?.abort();
  }

  /**
   * Nothing listens to the signal any longer (the start's opens answered, each under a signal of its own
   * that no longer follows this one: sources.ts openOwn): it is let go, and made anew when next asked.
   */
  letGo(): void {
    if (!this.over) this.ctl = undefined;
  }
}
