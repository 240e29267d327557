import { describe, expect, it } from 'vitest';
import { FEEDBACK_ACTION_ID, replyWithFeedback } from '../../adapters/slack/feedback-blocks.js';
import { renderSlackReply } from '../../adapters/slack/render.js';
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
    expect(texts.length).toBeGreaterThanOrEqual(2);
    for (const t of texts) {
      expect(t.length).toBeLessThanOrEqual(3000);
      expect((t.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(validateBlocks(JSON.stringify(blocks))).toBeUndefined();
  });

  describe('never cuts inside a link, an entity or an emoji at the section limit', () => {
    const cases: Record<string, string> = {
      'a link': `${'q'.repeat(2980)} [a link label](https://example.com/some/long/path) ${'r'.repeat(600)}`,
      'a link whose label has many words': `${'q'.repeat(2960)} [one two three four five six seven eight](https://example.com/p) ${'r'.repeat(600)}`,
      'an entity': `${'x'.repeat(2993)} a&b ${'y'.repeat(600)}`,
      'an entity in a long word': `${'x'.repeat(2997)}&${'y'.repeat(600)}`,
      'emoji': '😀'.repeat(1700),
      'emoji after an odd number of letters': `a${'😀'.repeat(1700)}`,
    };
    for (const [what, markdown] of Object.entries(cases)) {
      it(what, () => {
        const [chunk] = renderSlackReply(markdown);
        expect(chunk!.length).toBeGreaterThan(3000);
        const blocks = replyWithFeedback(chunk!, ref)!;
        expect(validateBlocks(JSON.stringify(blocks))).toBeUndefined();
        const texts = blocks.slice(0, -1).map((b) => (b as { text: { text: string } }).text.text);
        expect(texts.length).toBeGreaterThan(1);
        for (const t of texts) {
          expect(t.length).toBeLessThanOrEqual(3000);
          // Every link whole: as many < as >, none open at an end.
          expect((t.match(/</g) ?? []).length).toBe((t.match(/>/g) ?? []).length);
          // Every & begins a whole entity.
          expect(t.replace(/&(amp|lt|gt);/g, '')).not.toContain('&');
          // No half of a surrogate pair at either end.
          expect(t).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
        }
        // Nothing lost: the sections are the chunk, cut at whitespace or not at all.
        expect(texts.join('').replace(/\s/g, '')).toBe(chunk!.replace(/\s/g, ''));
        for (const link of chunk!.match(/<[^>]*>/g) ?? []) expect(texts.some((t) => t.includes(link))).toBe(true);
      });
    }
  });
});
