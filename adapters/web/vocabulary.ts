import type { PlatformVocabulary } from '../../src/core/platform-context.js';

/** The playground's words: it has no mentions, and binds channels from its admin panel. */
export const webVocabulary: PlatformVocabulary = {
  workspace: 'playground',
  command: '/agent',
  notices: {
    notBound: 'This channel is not connected to an agent yet. Bind it to an instance in the admin panel.',
    empty: 'Type a question for the agent.',
    noAccount: 'This workspace has no agent account yet. Set its API key first (`/agent setup`).',
  },
};
