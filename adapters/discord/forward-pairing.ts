/**
 * A forward with a comment: Discord's client sends them as two messages, the forward (no content
 * of its own, so no mention) and the comment, by the same person in the same channel at once.
 * In a channel where the bot answers mentions only, "forward this and ask the bot" reached the
 * agent as the question alone. The two are paired here by author, channel and Discord's
 * timestamps: the comment carries the forward's text, or, the other way round, the forward is
 * taken as addressed because its comment was.
 */
export interface ForwardPairing {
  /**
   * A forward the bot would not answer on its own, sent at `at` (ms). True when its author's
   * message just before addressed the bot (answer it too); otherwise it is kept for a message
   * that addresses the bot just after.
   */
  forward(key: string, at: number, text: string): boolean;
  /** A message that addresses the bot: the text of the forward its author sent just before, taken once. */
  addressed(key: string, at: number): string | undefined;
}

/** How close the two messages of one forward with a comment are (the client sends them together). */
export const PAIR_WINDOW_MS = 3_000;
/** Entries kept at most (older ones are dropped first). */
const MAX_ENTRIES = 10_000;

/** `key`: channel and author, e.g. `${channelId}:${authorId}`. */
export function createForwardPairing(windowMs = PAIR_WINDOW_MS): ForwardPairing {
  const forwards = new Map<string, { at: number; text: string }>();
  const addressed = new Map<string, number>();
  const near = (a: number, b: number) => Math.abs(a - b) <= windowMs;
  function keep<V>(map: Map<string, V>, key: string, value: V): void {
    map.delete(key);
    map.set(key, value);
    if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value!);
  }
  return {
    forward(key, at, text) {
      const comment = addressed.get(key);
      if (comment !== undefined && near(comment, at)) return true;
      keep(forwards, key, { at, text });
      return false;
    },
    addressed(key, at) {
      keep(addressed, key, at);
      const f = forwards.get(key);
      if (f === undefined) return undefined;
      forwards.delete(key);
      return near(f.at, at) ? f.text : undefined;
    },
  };
}
