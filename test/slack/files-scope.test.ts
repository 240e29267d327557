import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_SCOPES } from '../emulators/slack/index.js';
import { botMention, chatCalls, logLines, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * An app installed without `files:read` (an old manifest, a scope removed): Slack answers the
 * download with its sign-in page and `files.info` with `missing_scope`. The user is told in
 * plain words why their file was not sent, and the operator reads one warning naming the scope.
 */
describe('Slack files without the files:read scope', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http', emulator: { scopes: MANIFEST_SCOPES.filter((s) => s !== 'files:read') } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);

  it('tells the user the app may not read files, and warns once naming the scope', async () => {
    for (const [n, stub] of [[1, false], [2, true]] as const) {
      const file = h.slack.files.add({ name: `notes${n}.txt`, mimetype: 'text/plain', content: 'private notes' }, { stub });
      const asked = await say(h, { channel: W.general, text: `${botMention(h)} read my notes ${n}`, files: [file] });
      await until(() => chatCalls(h).find((c) => messageOf(c) === `read my notes ${n}`), `the question ${n} without the file`);
      const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === asked.ts && /Not sent/.test(c.params.text ?? ''));
      expect(notice.params.text).toContain('files:read');
      expect(notice.params.text).toMatch(/Slack did not let this app read files: an admin needs to give it the files:read permission and reinstall it\./);
    }
    const warnings = logLines(h, /files:read/).filter((l) => l.level === 40 || l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.scope).toBe('files:read');
  });
});
