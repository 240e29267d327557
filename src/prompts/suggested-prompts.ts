import type { Redis } from 'ioredis';
import type { Platform } from '../core/conversation.js';
import { queueKeys } from '../queue/keys.js';

/** Most prompts Slack shows in an assistant thread. */
export const MAX_SUGGESTED_PROMPTS = 4;
/** Longest prompt title kept (Slack shows short titles; the title is also the message sent). */
export const MAX_PROMPT_CHARS = 75;

/** Half of a surrogate pair (an emoji cut in two). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * A title cut to at most MAX_PROMPT_CHARS UTF-16 units, at a whole character: a cut inside an
 * emoji's surrogate pair (or a flag, a skin tone, a family joined by ZWJ) would send Slack half
 * a character, shown as a broken glyph.
 */
export function cutPromptTitle(title: string): string {
  if (title.length <= MAX_PROMPT_CHARS) return title;
  let out = '';
  for (const { segment } of graphemes.segment(title)) {
    if (out.length + segment.length > MAX_PROMPT_CHARS) break;
    out += segment;
  }
  return out.trimEnd();
}

/** Shown when the binding has none of its own. */
export const DEFAULT_SUGGESTED_PROMPTS = ['What can you help me with?', 'Summarise a topic for me', 'Help me write a message', 'Explain something step by step'];

/**
 * Suggested prompts per bound channel, set by admins (`/agent set prompts <title> | <title> …`).
 * Kept in the hash `${prefix}:prompts`, field `${platform}:${channelId}`, beside the binding
 * rather than in it, so the binding's format stays as it is.
 */
export interface SuggestedPromptStore {
  get(platform: Platform, channelId: string): Promise<string[] | undefined>;
  /** An empty list removes the channel's prompts (the defaults apply again). */
  set(platform: Platform, channelId: string, prompts: string[]): Promise<string[]>;
}

/** Splits `a | b | c` into at most four trimmed, non-empty titles. */
export function parsePromptList(text: string): string[] {
  return text
    .split('|')
    .map((t) => cutPromptTitle(t.replace(/\s+/g, ' ').trim()))
    .filter(Boolean)
    .slice(0, MAX_SUGGESTED_PROMPTS);
}

export function createSuggestedPromptStore(options: { redis: Redis; prefix: string }): SuggestedPromptStore {
  const key = queueKeys(options.prefix).prompts;
  return {
    async get(platform, channelId) {
      const raw = await options.redis.hget(key, `${platform}:${channelId}`);
      if (!raw) return undefined;
      try {
        const list = JSON.parse(raw) as unknown;
        // Titles stored before cuts kept whole characters may end in half an emoji: drop the half.
        return Array.isArray(list)
          ? list
              .filter((t): t is string => typeof t === 'string')
              .map((t) => t.replace(LONE_SURROGATE, ''))
              .filter(Boolean)
              .slice(0, MAX_SUGGESTED_PROMPTS)
          : undefined;
      } catch {
        return undefined;
      }
    },
    async set(platform, channelId, prompts) {
      const clean = prompts.map((p) => cutPromptTitle(p.trim())).filter(Boolean).slice(0, MAX_SUGGESTED_PROMPTS);
      if (clean.length === 0) await options.redis.hdel(key, `${platform}:${channelId}`);
      else await options.redis.hset(key, `${platform}:${channelId}`, JSON.stringify(clean));
      return clean;
    },
  };
}
