import type { Platform } from '../core/conversation.js';
import type { PlatformVocabulary } from '../core/platform-context.js';

/** The wording of a platform that has not registered one: Slack's and Discord's defaults. */
export const DEFAULT_VOCABULARY: PlatformVocabulary = { workspace: 'workspace', command: '/agent' };

/**
 * The notices whose words depend on the platform: how an admin connects a channel, how a
 * user asks, how a workspace gets an account. A platform's `vocabulary` may give its own
 * (the playground has no mentions and binds from its admin panel); the defaults use its command.
 */
export interface PlatformNotices {
  notBound: string;
  empty: string;
  noAccount: string;
}

/** The platform-dependent notices, in the words of the platform's vocabulary. */
export function platformNotices(vocabulary: PlatformVocabulary): PlatformNotices {
  const { command, notices: own } = vocabulary;
  return {
    notBound: own?.notBound ?? `This channel isn't connected to an agent yet. An admin can connect one with \`${command} bind <instance-id>\`.`,
    empty: own?.empty ?? 'Mention me with a question, for example: `@agent what changed this week?`',
    noAccount: own?.noAccount ?? `This workspace has no agent account yet, so I can't send your message. An admin can set one up with \`${command} setup\`.`,
  };
}

/** Each platform's notices, worked out once per platform (ingress and the worker both post them). */
export function noticesByPlatform(vocabularies: Partial<Record<Platform, PlatformVocabulary>> = {}): (platform: Platform) => PlatformNotices {
  const wording = new Map<Platform, PlatformNotices>();
  return (platform) => {
    let words = wording.get(platform);
    if (!words) wording.set(platform, (words = platformNotices(vocabularies[platform] ?? DEFAULT_VOCABULARY)));
    return words;
  };
}

/** What ingress tells users, in plain words. */
export const notices = {
  attachmentsOnly: "I can only read text: attachments aren't forwarded to the agent. Please type your question.",
  attachments: "Note: attachments aren't forwarded to the agent; only your text was sent.",
  tooLong: (length: number, max: number) =>
    `That message is ${length.toLocaleString('en-US')} characters long; the limit is ${max.toLocaleString('en-US')}. Please shorten it and send it again.`,
  busy: (pending: number) =>
    `This channel has ${pending.toLocaleString('en-US')} messages waiting for the agent, the most it may queue. Please send yours again once those are answered.`,
  unavailable: "I couldn't accept your message just now (the queue is unavailable). Please send it again in a minute.",
};
