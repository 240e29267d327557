import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { chatCalls, postsIn, startSlackBridge, until, W, type SlackHarness } from './harness.js';
import { nothingToAsk } from '../../adapters/slack/ask-shortcut.js';

/**
 * "Ask the agent" on a message whose only content is files none of which can be sent (an image,
 * a file too large): before, the agent was called with the heading alone ("Message from …:"),
 * a billed call about nothing. The asker is told privately instead, as for a message with no text.
 */
let h: SlackHarness;
beforeAll(async () => {
  h = await startSlackBridge({ mode: 'http', env: { MAX_ATTACHMENT_BYTES: '1000' } });
});
afterAll(async () => {
  await h?.close();
});

const messages = () => chatCalls(h).map((c) => String((c.json as { message?: string }).message));

async function askAbout(files: Record<string, unknown>[]) {
  const m = h.slack.userMessage({ channel: W.general, user: W.admin, text: '', files });
  const calls = chatCalls(h).length;
  const sent = await h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: m.ts, callbackId: 'ask_agent' }));
  expect(sent.acked).toBe(true);
  return { m, calls };
}

describe('"Ask the agent" on a message with only files that cannot be sent (Slack)', () => {
  it('an image only: the asker is told privately, the agent is not called, nothing is posted in the thread', async () => {
    const image = h.slack.files.add({ name: 'photo.png', mimetype: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]) });
    const { m, calls } = await askAbout([image]);
    const told = await h.slack.waitForCall('response_url', (c) => String(c.params.text ?? '').includes(nothingToAsk), 20_000);
    expect(told.params.response_type).toBe('ephemeral');
    expect(String(told.params.text)).toContain('photo.png');
    await sleep(500);
    expect(chatCalls(h).length).toBe(calls);
    expect(postsIn(h, W.general, m.ts)).toEqual([]);
  });

  it('a text file too large only: told privately why, no agent call', async () => {
    const big = h.slack.files.add({ name: 'huge.log', mimetype: 'text/plain', content: 'x'.repeat(5_000) });
    const { m, calls } = await askAbout([big]);
    const told = await h.slack.waitForCall('response_url', (c) => String(c.params.text ?? '').includes('huge.log'), 20_000);
    expect(String(told.params.text)).toContain('too large');
    await sleep(500);
    expect(chatCalls(h).length).toBe(calls);
    expect(postsIn(h, W.general, m.ts)).toEqual([]);
  });

  it('a readable text file with an image: sent, with the file', async () => {
    const image = h.slack.files.add({ name: 'chart.png', mimetype: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]) });
    const notes = h.slack.files.add({ name: 'notes.txt', mimetype: 'text/plain', content: 'deploy at noon' });
    await askAbout([image, notes]);
    await until(() => messages().find((t) => t.includes('deploy at noon')), 'the file sent to the agent');
    expect(messages().find((t) => t.includes('deploy at noon'))).toMatch(/^Message from Ada Admin:\n/);
  });
});

describe('files Slack no longer serves, on a message asked about (Slack)', () => {
  it('hidden by a free plan, or deleted: the text is sent; the notice says which files and why, not "only text files"', async () => {
    const hidden = h.slack.files.add({ name: 'old-notes.txt', mimetype: 'text/plain', content: 'from long ago' }, { gone: 'hidden_by_limit' });
    const deleted = h.slack.files.add({ name: 'removed.txt', mimetype: 'text/plain', content: 'deleted' }, { gone: 'tombstone' });
    expect(hidden).toEqual({ id: hidden.id, mode: 'hidden_by_limit' });
    const m = h.slack.userMessage({ channel: W.general, user: W.admin, text: 'the notes from last year', files: [hidden, deleted] });
    await h.to.interaction(h.slack.messageShortcut({ user: W.user, channel: W.general, messageTs: m.ts, callbackId: 'ask_agent' }));
    await until(() => messages().find((t) => t.includes('the notes from last year')), 'the text sent to the agent');
    const notice = await until(() => postsIn(h, W.general, m.ts).find((c) => /Not sent to the agent/.test(c.params.text ?? '')), 'the files notice');
    expect(notice.params.text).toBe("Not sent to the agent: a file hidden by this workspace's Slack plan (could not be read), a deleted file (could not be read).");
  });

  it('only such files: the asker is told privately, no agent call', async () => {
    const deleted = h.slack.files.add({ name: 'gone.txt', mimetype: 'text/plain', content: 'x' }, { gone: 'tombstone' });
    const { calls } = await askAbout([deleted]);
    const told = await h.slack.waitForCall('response_url', (c) => String(c.params.text ?? '').includes('a deleted file'), 20_000);
    expect(String(told.params.text)).toContain(nothingToAsk);
    await sleep(300);
    expect(chatCalls(h).length).toBe(calls);
  });
});
