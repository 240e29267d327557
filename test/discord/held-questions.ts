import { expect } from 'vitest';
import type { EmuChannel, Json } from '../emulators/discord/index.js';
import type { HeldCalls } from '../support/held-calls.js';
import { GATEWAY_CACHE_LIMITS } from '../../adapters/discord/gateway-cache.js';
import { until, type DiscordHarness } from './harness.js';

/**
 * What suites about questions that wait in line do on a harness started with `held`
 * (startDiscordBridge): hold an agent call so the messages after it wait, then act on them.
 */
export interface HeldQuestions {
  /** Agent calls made so far whose message includes `text`. */
  called(text: string): number;
  /** Alice writes `content` in `channel`. */
  say(channel: EmuChannel, content: string): Json;
  /** Alice writes `${before}HOLD ${content}`; resolves once its agent call is under way (and held). */
  heldQuestion(channel: EmuChannel, content: string, before?: string): Promise<Json>;
  /** Waits until the ingress queued these messages (they wait behind the held call). */
  queued(messages: Json | Json[]): Promise<void>;
  /** The held calls go on. */
  release(): void;
  /**
   * Bob's chatter, which asks nothing (no mention, in a mention-only channel), until `m` is out of
   * discord.js's message cache (it keeps the newest of a channel only: gateway-cache.ts).
   */
  pushOutOfCache(channel: EmuChannel, m: Json): Promise<void>;
}

/** `harness` is read at each call: suites assign it in `beforeAll`. */
export function heldQuestions(harness: () => DiscordHarness, held: HeldCalls): HeldQuestions {
  const called = (text: string) => harness().agent.chatCalls().filter((c) => c.message.includes(text)).length;
  const say = (channel: EmuChannel, content: string): Json => {
    const h = harness();
    return h.discord.sendMessage({ author: h.discord.world.users.alice, channel, content });
  };
  return {
    called,
    say,
    async heldQuestion(channel, content, before = '') {
      held.hold();
      const m = say(channel, `${before}HOLD ${content}`);
      await until(() => called(content) === 1, `agent call of "${content}" under way`);
      return m;
    },
    async queued(messages) {
      const ids = new Set((Array.isArray(messages) ? messages : [messages]).map((m) => String(m.id)));
      const queuedIds = () => harness().logs.matching(/discord message handled/).filter((l) => ids.has(String(l.messageId)) && l.status === 'queued');
      await until(() => new Set(queuedIds().map((l) => String(l.messageId))).size === ids.size, 'queued');
    },
    release: () => held.release(),
    async pushOutOfCache(channel, m) {
      const h = harness();
      const chatter = Array.from({ length: GATEWAY_CACHE_LIMITS.messagesPerChannel + 1 }, (_, i) =>
        h.discord.sendMessage({ author: h.discord.world.users.bob, channel, content: `chatter ${i}` }),
      );
      const cached = (id: unknown) => {
        const c = h.adapter.client?.channels.cache.get(channel.id);
        return c?.isTextBased() === true && c.messages.cache.has(String(id));
      };
      await until(() => cached(chatter.at(-1)!.id), 'chatter seen by the client');
      expect(cached(m.id)).toBe(false);
    },
  };
}
