/**
 * An agent reply for tests where a question waits in line behind a slow one: a call whose
 * message holds `HOLD` waits until `release()`, every other one answers at once (`echo: …`).
 * One gate at a time: `hold()` closes a new one.
 */
export class HeldCalls {
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => {};

  /** From now on, calls whose message holds `HOLD` wait. */
  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  /** The calls held so far go on. */
  release(): void {
    this.open();
  }

  /** The agent emulator's `reply`. */
  readonly reply = async (_instanceId: string, message: string): Promise<string> => {
    if (message.includes('HOLD')) await this.gate;
    return `echo: ${message}`;
  };
}

/**
 * An agent reply whose call on a message holding `hold <name>` waits until `release(name)`;
 * every other one answers at once (`echo: …`). For tests that hold several calls apart.
 */
export class NamedHolds {
  private readonly waiting = new Map<string, () => void>();

  /** Lets the call held as `name` go on (it must be under way); a later `hold <name>` waits again. */
  release(name: string): void {
    const go = this.waiting.get(name);
    if (!go) throw new Error(`no agent call is held as "${name}"`);
    this.waiting.delete(name);
    go();
  }

  /** Lets every held call go on (a suite's teardown). */
  releaseAll(): void {
    for (const name of [...this.waiting.keys()]) this.release(name);
  }

  /** Whether a call held as `name` is under way. */
  has(name: string): boolean {
    return this.waiting.has(name);
  }

  /** The agent emulator's `reply`. */
  readonly reply = async (_instanceId: string, message: string): Promise<string> => {
    const name = /hold (\w+)/.exec(message)?.[1];
    if (name) await new Promise<void>((resolve) => this.waiting.set(name, resolve));
    return `echo: ${message}`;
  };
}
