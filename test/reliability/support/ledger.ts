/**
 * Bookkeeping of a traffic run: what was sent (per conversation, in order) against what was
 * answered (in the order the platform received the answers). Counts what the issue asks for:
 * lost, duplicated, and conversations whose answers came out of order.
 */
export class Ledger {
  private readonly sent = new Map<string, string[]>();
  private readonly conversationOf = new Map<string, string>();

  send(conversation: string, id: string): void {
    const list = this.sent.get(conversation) ?? [];
    list.push(id);
    this.sent.set(conversation, list);
    this.conversationOf.set(id, conversation);
  }

  get messages(): number {
    return this.conversationOf.size;
  }

  get conversations(): number {
    return this.sent.size;
  }

  ids(): string[] {
    return [...this.conversationOf.keys()];
  }

  has(id: string): boolean {
    return this.conversationOf.has(id);
  }

  /** `answered`: message IDs in the order their answers reached the platform (one entry per answer). */
  evaluate(answered: readonly string[]): { messages: number; conversations: number; answered: number; lost: number; duplicated: number; outOfOrder: number; unknown: number; examples: string[] } {
    const counts = new Map<string, number>();
    let unknown = 0;
    const order = new Map<string, string[]>();
    for (const id of answered) {
      const conversation = this.conversationOf.get(id);
      if (!conversation) {
        unknown++;
        continue;
      }
      counts.set(id, (counts.get(id) ?? 0) + 1);
      if (counts.get(id) === 1) {
        const list = order.get(conversation) ?? [];
        list.push(id);
        order.set(conversation, list);
      }
    }
    const examples: string[] = [];
    let lost = 0;
    let duplicated = 0;
    for (const id of this.conversationOf.keys()) {
      const n = counts.get(id) ?? 0;
      if (n === 0) {
        lost++;
        if (examples.length < 5) examples.push(`lost ${id}`);
      }
      if (n > 1) {
        duplicated += n - 1;
        if (examples.length < 5) examples.push(`duplicated ${id} ×${n}`);
      }
    }
    let outOfOrder = 0;
    for (const [conversation, ids] of this.sent) {
      const got = order.get(conversation) ?? [];
      const expected = ids.filter((id) => got.includes(id));
      if (expected.join('\n') !== got.join('\n')) {
        outOfOrder++;
        if (examples.length < 5) examples.push(`order in ${conversation}: ${got.slice(0, 6).join(',')}`);
      }
    }
    return { messages: this.messages, conversations: this.conversations, answered: answered.length, lost, duplicated, outOfOrder, unknown, examples };
  }
}

/** One line the final report quotes: `[figures] name {...}`. */
export function figures(name: string, data: Record<string, unknown>): void {
  console.log(`[figures] ${name} ${JSON.stringify(data)}`);
}
