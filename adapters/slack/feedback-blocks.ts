import type { KnownBlock } from '@slack/web-api';
import { encodeFeedbackValue } from '../../src/feedback/index.js';
import { splitMrkdwn } from './split-mrkdwn.js';

/** action_id of the feedback buttons on the last message of a reply. */
export const FEEDBACK_ACTION_ID = 'agent_feedback';

/** Slack's limit on a section's text. */
const SECTION_CHARS = 3_000;

/**
 * A reply chunk as blocks with Slack's native feedback buttons under it (a `context_actions`
 * block holding `feedback_buttons`). With blocks Slack shows the blocks, not `text`, so the
 * chunk goes into sections; a chunk over a section's limit is split as replies are (at a line,
 * then a word; a code fence open at the split closed and reopened), never inside a link. Undefined when the reply cannot be
 * identified (the click must say which reply it rates).
 */
export function replyWithFeedback(chunk: string, ref: { instanceId: string; agentMessageId: string }): KnownBlock[] | undefined {
  const positive = encodeFeedbackValue({ ...ref, rating: 'positive' }, 2000);
  const negative = encodeFeedbackValue({ ...ref, rating: 'negative' }, 2000);
  if (!positive || !negative) return undefined;
  const sections = splitSections(chunk).map((text): KnownBlock => ({ type: 'section', text: { type: 'mrkdwn', text } }));
  const feedback = {
    type: 'context_actions',
    elements: [
      {
        type: 'feedback_buttons',
        action_id: FEEDBACK_ACTION_ID,
        positive_button: { text: { type: 'plain_text', text: 'Good response' }, value: positive, accessibility_label: 'This reply was helpful' },
        negative_button: { text: { type: 'plain_text', text: 'Bad response' }, value: negative, accessibility_label: 'This reply was not helpful' },
      },
    ],
  };
  // The SDK's KnownBlock union predates context_actions.
  return [...sections, feedback as unknown as KnownBlock];
}

/** The chunk in sections of at most SECTION_CHARS, cut cleanly (never inside a link, an entity or an emoji). */
function splitSections(text: string): string[] {
  const out = splitMrkdwn(text, SECTION_CHARS).filter((piece) => piece.trim());
  return out.length > 0 ? out : [' '];
}
