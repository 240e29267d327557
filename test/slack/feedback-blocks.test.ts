import { describe, expect, it } from 'vitest';
import { FEEDBACK_ACTION_ID, replyWithFeedback } from '../../adapters/slack/feedback-blocks.js';
import { validateBlocks } from '../emulators/slack/validate.js';

describe('replyWithFeedback', () => {
  const ref = { instanceId: 'inst_a', agentMessageId: 'msg_42' };

  it('puts the chunk in a section and the feedback buttons in a context_actions block Slack accepts', () => {
    const blocks = replyWithFeedback('hello *there*', ref)!;
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: 'hello *there*' } });
    const row = blocks[1] as unknown as { type: string; elements: Array<Record<string, any>> };
    expect(row.type).toBe('context_actions');
    expect(row.elements[0]!.action_id).toBe(FEEDBACK_ACTION_ID);
    expect(row.elements[0]!.positive_button.value).not.toBe(row.elements[0]!.negative_button.value);
    expect(validateBlocks(JSON.stringify(blocks))).toBeUndefined();
  });

  it('splits a chunk over a section limit at a line, closing and reopening an open code fence', () => {
    const code = Array.from({ length: 120 }, (_, i) => `line ${i} ${'x'.repeat(20)}`).join('\n');
    const chunk = `intro\n\`\`\`\n${code}\n\`\`\``;
    expect(chunk.length).toBeGreaterThan(3000);
    const blocks = replyWithFeedback(chunk, ref)!;
    const texts = blocks.slice(0, -1).map((b) => (b as { text: { text: string } }).text.text);
    expect(texts).toHaveLength(2);
    for (const t of texts) {
      expect(t.length).toBeLessThanOrEqual(3000);
      expect((t.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(validateBlocks(JSON.stringify(blocks))).toBeUndefined();
  });
});
