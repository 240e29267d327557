import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attachmentsToSlackText, filesOf, ownText, shownText } from '../../adapters/slack/shown-text.js';
import { slackTextToPlain } from '../../adapters/slack/slack-text.js';

describe('shownText', () => {
  it("keeps a person's text over the rich text that mirrors it", () => {
    const blocks = [{ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'mirror' }] }] }];
    expect(ownText({ text: 'hello <@U1>', blocks })).toBe('hello <@U1>');
    expect(ownText({ text: '', blocks })).toBe('mirror');
  });

  it("reads an app's section blocks over its notification fallback", () => {
    expect(ownText({ text: 'New alert', blocks: [{ type: 'section', text: { type: 'plain_text', text: 'CPU > 90% & rising' } }] })).toBe('CPU &gt; 90% &amp; rising');
  });

  it('reads a markdown block as Markdown, its < and > as characters', () => {
    expect(slackTextToPlain(shownText({ text: '', blocks: [{ type: 'markdown', text: 'if a < b and c > d: **swap**' }] }))).toBe('if a < b and c > d: **swap**');
  });

  it('reads a table block row by row', () => {
    const rich = { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'link', url: 'https://x/2', text: '#2' }] }] };
    const rows = [[{ type: 'raw_text', text: 'PR' }, { type: 'raw_text', text: 'State' }], [rich, { type: 'raw_text', text: 'a < b' }]];
    expect(slackTextToPlain(shownText({ text: 'fallback', blocks: [{ type: 'table', rows }] }))).toBe('PR | State\n#2 (https://x/2) | a < b');
  });

  it("reads a rich-text date by its fallback", () => {
    const blocks = [{ type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'text', text: 'due ' }, { type: 'date', timestamp: 1700000000, format: '{date_short}', fallback: 'Nov 14, 2023' }] }] }];
    expect(shownText({ text: '', blocks })).toBe('due Nov 14, 2023');
  });

  it('leaves out link previews, keeps shares and app attachments', () => {
    const parts = attachmentsToSlackText([
      { from_url: 'https://example.com', title: 'Example Domain', text: 'page words' },
      { is_msg_unfurl: true, from_url: 'https://x.slack.com/archives/C1/p1', author_name: 'Ada', text: 'linked words' },
      { color: 'danger', fallback: 'only the fallback' },
    ]);
    expect(parts).toEqual(['Shared message from Ada:\n> linked words', 'only the fallback']);
  });

  it('collects the files of forwarded messages after its own', () => {
    expect(filesOf({ files: [{ id: 'F1' }], attachments: [{ is_share: true, files: [{ id: 'F2' }] }, { files: [{ id: 'F3' }] }] })).toEqual([{ id: 'F1' }, { id: 'F2' }]);
    expect(filesOf({})).toBeUndefined();
  });

  it('never throws, whatever Slack (or anyone) sends', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), fc.anything(), (text, blocks, attachments, files) => {
        expect(typeof shownText({ text, blocks, attachments })).toBe('string');
        filesOf({ files, attachments });
      }),
      { numRuns: 500 },
    );
    const deep = { is_share: true, message_blocks: [{ message: null }, { message: { blocks: 'x' } }, 'x'], fields: 'no' };
    expect(shownText({ attachments: [deep, null, 7] })).toBe('');
  });
});
