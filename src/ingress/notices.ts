import type { Platform } from '../core/conversation.js';

/** What ingress tells users, in plain words. */
export const notices = {
  notBound: (platform: Platform) =>
    platform === 'web'
      ? 'This channel is not connected to an agent yet. Bind it to an instance in the admin panel.'
      : "This channel isn't connected to an agent yet. An admin can connect one with `/agent bind <instance-id>`.",
  empty: (platform: Platform) =>
    platform === 'web' ? 'Type a question for the agent.' : 'Mention me with a question, for example: `@agent what changed this week?`',
  attachmentsOnly: "I can only read text: attachments aren't forwarded to the agent. Please type your question.",
  attachments: "Note: attachments aren't forwarded to the agent; only your text was sent.",
  tooLong: (length: number, max: number) =>
    `That message is ${length.toLocaleString('en-US')} characters long; the limit is ${max.toLocaleString('en-US')}. Please shorten it and send it again.`,
  busy: (pending: number) =>
    `This channel has ${pending.toLocaleString('en-US')} messages waiting for the agent, the most it may queue. Please send yours again once those are answered.`,
  noAccount: (platform: Platform) =>
    platform === 'web'
      ? "This workspace has no agent account yet. Set its API key first (`/agent setup`)."
      : "This workspace has no agent account yet, so I can't send your message. An admin can set one up with `/agent setup`.",
  unavailable: "I couldn't accept your message just now (the queue is unavailable). Please send it again in a minute.",
};
