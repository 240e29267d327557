/**
 * Runs tasks one after another per key, so messages of one channel reach ingress in the order
 * the gateway delivered them even when one of them waits on a lookup (a replied-to message).
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<void>>();

  run(key: string, task: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(task);
    const tail = next.catch(() => {});
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }

  /** Resolves when every task queued so far has settled. */
  async idle(): Promise<void> {
    await Promise.all([...this.tails.values()]);
  }
}
