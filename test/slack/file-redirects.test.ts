import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepSlackTokenOnRedirect } from '../../adapters/slack/file-redirect-auth.js';
import { botMention, chatCalls, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * Slack's file host may answer `url_private_download` with a 302 to another of its origins
 * that still asks for the bot token (Enterprise Grid: files.slack.com → files-origin.slack.com).
 * The token follows there, and never to a host Slack does not own.
 */
describe('Slack file downloads behind a redirect, and Slack Connect stubs', () => {
  let h: SlackHarness;
  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
  });
  afterAll(async () => {
    await h?.close();
  });

  const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);
  const agentGot = (pattern: RegExp) => until(() => chatCalls(h).find((c) => pattern.test(messageOf(c))), `agent call matching ${pattern}`);

  it('reads a file Slack hands on to its second origin, with the bot token on both hops', async () => {
    const file = h.slack.files.add({ name: 'plan.txt', mimetype: 'text/plain', content: 'ship on friday' }, { redirect: 'slack-origin' });
    const asked = await say(h, { channel: W.general, text: `${botMention(h)} read the plan behind a redirect`, files: [file] });
    const call = await agentGot(/read the plan behind a redirect/);
    expect(messageOf(call)).toBe('read the plan behind a redirect\n\nplan.txt:\n```txt\nship on friday\n```');
    const hops = h.slack.files.downloads.filter((d) => d.path === new URL(file.url_private_download as string).pathname);
    expect(hops.map((d) => [d.host, d.authorization])).toEqual([
      ['files', `Bearer ${h.slack.identity.botToken}`],
      ['files-origin', `Bearer ${h.slack.identity.botToken}`],
    ]);
    expect(h.slack.posted((c) => c.params.thread_ts === asked.ts && /Not sent/.test(c.params.text ?? ''))).toEqual([]);
  });

  it('never sends the bot token along a redirect to a host Slack does not own', async () => {
    const file = h.slack.files.add({ name: 'secret.txt', mimetype: 'text/plain', content: 'do not leak' }, { redirect: 'foreign' });
    const asked = await say(h, { channel: W.general, text: `${botMention(h)} read the foreign file`, files: [file] });
    const call = await agentGot(/read the foreign file/);
    expect(messageOf(call)).toBe('read the foreign file');
    const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === asked.ts && /Not sent/.test(c.params.text ?? ''));
    expect(notice.params.text).toBe('Not sent to the agent: secret.txt (could not be read).');
    const foreign = h.slack.files.downloads.filter((d) => d.host === 'foreign');
    expect(foreign.map((d) => d.path)).toEqual([new URL(file.url_private_download as string).pathname]);
    expect(foreign[0]!.authorization).toBeUndefined();
  });

  // Slack puts other hosts in url_private too: a Google Drive or Dropbox file, one an app added with files.remote.add.
  it('never sends the bot token to a file URL on a host Slack does not own, nor for an external file', async () => {
    const file = h.slack.files.add({ name: 'remote.txt', mimetype: 'text/plain', content: 'stored elsewhere' });
    const onForeignHost = (url: unknown) => String(url).replace(h.slack.files.baseOf('files'), h.slack.files.baseOf('foreign'));
    const remote = { ...file, url_private: onForeignHost(file.url_private), url_private_download: onForeignHost(file.url_private_download) };
    const external = { ...h.slack.files.add({ name: 'drive.txt', mimetype: 'text/plain', content: 'in drive' }), is_external: true, external_type: 'gdrive' };
    const before = h.slack.files.downloads.length;
    const asked = await say(h, { channel: W.general, text: `${botMention(h)} read the remote files`, files: [remote, external] });
    const call = await agentGot(/read the remote files/);
    expect(messageOf(call)).toBe('read the remote files');
    const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === asked.ts && /Not sent/.test(c.params.text ?? ''));
    expect(notice.params.text).toBe('Not sent to the agent: remote.txt (could not be read), drive.txt (could not be read).');
    expect(h.slack.files.downloads.slice(before)).toEqual([]);
  });

  // Slack Connect channels carry files as stubs (`file_access: check_file_info`): `files.info` has the rest.
  it('reads a file the message carries only as a stub, through files.info', async () => {
    const file = h.slack.files.add({ name: 'notes.txt', mimetype: 'text/plain', content: 'from the other org' }, { stub: true });
    expect(file.url_private_download).toBeUndefined();
    await say(h, { channel: W.general, text: `${botMention(h)} read the shared file`, files: [file] });
    const call = await until(() => chatCalls(h).find((c) => /read the shared file/.test(messageOf(c))), 'the agent call');
    expect(messageOf(call)).toBe('read the shared file\n\nnotes.txt:\n```txt\nfrom the other org\n```');
    expect(h.slack.callsOf('files.info').map((c) => c.params.file)).toEqual([file.id]);
  });

  it('says which file could not be read when files.info refuses it', async () => {
    const file = h.slack.files.add({ name: 'gone.txt', mimetype: 'text/plain', content: 'x' }, { stub: true });
    h.slack.state.fileInfos.delete(String(file.id));
    const asked = await say(h, { channel: W.general, text: `${botMention(h)} read the vanished file`, files: [file] });
    await until(() => chatCalls(h).find((c) => messageOf(c) === 'read the vanished file'), 'the agent call without the file');
    const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === asked.ts && /Not sent/.test(c.params.text ?? ''));
    expect(notice.params.text).toBe('Not sent to the agent: a shared file (could not be read).');
  });
});

describe('keepSlackTokenOnRedirect', () => {
  const keeps = (target: string, first = 'https://files.slack.com/files-pri/T1-F1/download/a.txt') => keepSlackTokenOnRedirect(new URL(target), new URL(first));

  it('keeps the token on https Slack hosts', () => {
    expect(keeps('https://files-origin.slack.com/files-pri/T1-F1/download/a.txt')).toBe(true);
    expect(keeps('https://slack.com/x')).toBe(true);
    expect(keeps('https://acme.enterprise.slack.com/x')).toBe(true);
  });

  it("drops it for Slack's presigned CDN hosts, hosts that only look like Slack's, and plain http", () => {
    expect(keeps('https://files.slack-edge.com/x?sig=1')).toBe(false);
    expect(keeps('https://slack-files.com/T1-F1-abc')).toBe(false);
    expect(keeps('https://evilslack.com/x')).toBe(false);
    expect(keeps('https://files.slack.com.example.net/x')).toBe(false);
    expect(keeps('http://files-origin.slack.com/x')).toBe(false);
    expect(keeps('https://example.com/x')).toBe(false);
  });

  it("keeps it on the first URL's hostname on another port (an emulator), never from https down to http", () => {
    expect(keeps('http://127.0.0.1:4002/f', 'http://127.0.0.1:4001/f')).toBe(true);
    expect(keeps('http://127.0.0.2:4002/f', 'http://127.0.0.1:4001/f')).toBe(false);
    expect(keeps('http://localhost:4002/f', 'http://127.0.0.1:4001/f')).toBe(false);
    expect(keeps('http://proxy.internal:8080/f', 'https://proxy.internal/f')).toBe(false);
  });
});
