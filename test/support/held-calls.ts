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
