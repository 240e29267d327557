import type { Redis } from 'ioredis';
import { encodeConversationId } from '../../../src/core/conversation.js';
import { webMessage, type Pipeline } from '../../support/pipeline.js';
import { messageRecords } from './keys.js';
import { Ledger } from './ledger.js';

/**
 * `perConversation` rounds of one message to each of `conversations` DM channels
 * (`<channel><c>`, texts `<text><c>-<i>`), in that interleaved order, entered in a ledger.
 */
export function interleavedTraffic(o: { conversations: number; perConversation: number; channel: string; text: string }) {
  const ledger = new Ledger();
  const byText = new Map<string, { messageId: string; conversationId: string }>();
  const messages: ReturnType<typeof webMessage>[] = [];
  for (let i = 0; i < o.perConversation; i++) {
    for (let c = 0; c < o.conversations; c++) {
      const channelId = `${o.channel}${c}`;
      const text = `${o.text}${c}-${i}`;
      const m = webMessage(text, { channelId, isDirect: true });
      ledger.send(channelId, m.messageId);
      byText.set(text, { messageId: m.messageId, conversationId: encodeConversationId(m.conversation) });
      messages.push(m);
    }
  }
  /** Messages whose agent call started and whose answer was not recorded: in flight. */
  const inFlight = async (pl: Pipeline, redis: Redis): Promise<string[]> => {
    const called = [...new Set(pl.agent.chatCalls().map((c) => c.message))].flatMap((t) => byText.get(t) ?? []);
    const records = await messageRecords(redis, pl.prefix, called);
    return called.filter((_, i) => Object.keys(records[i] ?? {}).length > 0 && records[i]!.reply === undefined).map((r) => r.messageId);
  };
  /**
   * Messages the bridge marked as having a call started (its own `started` count) and no answer
   * recorded: the call is under way or about to be made. A kill between the mark and the call
   * counts toward the crash cap as a call would (the bridge cannot tell them apart).
   */
  const markedStarted = async (pl: Pipeline, redis: Redis): Promise<string[]> => {
    const all = [...byText.values()];
    const records = await messageRecords(redis, pl.prefix, all);
    return all.filter((_, i) => Number(records[i]?.started ?? 0) > 0 && records[i]!.reply === undefined).map((r) => r.messageId);
  };
  return { ledger, byText, messages, inFlight, markedStarted };
}
