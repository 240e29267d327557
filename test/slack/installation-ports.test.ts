import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MultiWorkspaceReplyPort } from '../../adapters/slack/multi-workspace-port.js';
import { botMention, installWorkspace, startAddToSlackBridge, type SlackHarness } from './harness.js';

/**
 * "Add to Slack" over a long life: a worker builds a reply port (a WebClient of some 26 KB, and
 * caches of its own) for each installation it answers, and kept every one for the life of the
 * process, so a worker that ran for weeks held one for every workspace that ever wrote.
 */
const WORKSPACES = 12;
const MAX_PORTS = 4;
const CHANNEL = 'CPORTS001';
const teams = Array.from({ length: WORKSPACES }, (_, i) => `TPORTS${String(i).padStart(3, '0')}`);

let h: SlackHarness;
beforeAll(async () => {
  h = await startAddToSlackBridge({
    env: { BINDINGS: `slack:${CHANNEL}=demo-helper` },
    agent: { reply: (_id, m) => `echo: ${m}` },
    // Small, so that the test need not install a thousand workspaces; idle at once.
    replyPort: { installationPorts: { max: MAX_PORTS, idleMs: 0 } },
  });
  for (const team of teams) expect((await installWorkspace(h, team)).done.status).toBe(200);
}, 60_000);
afterAll(() => h?.close());

async function ask(team: string, text: string) {
  const m = h.slack.userMessage({ channel: CHANNEL, user: 'UUSER0001', text: `${botMention(h)} ${text}`, team });
  expect((await h.to.event(m.mention, { team: { teamId: team } })).status).toBe(200);
  const post = await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts, 30_000);
  return post;
}

describe("a worker's reply ports, one per installation", () => {
  it('keeps at most the limit of idle ones, and answers a workspace whose port was dropped as before', async () => {
    for (const team of teams) await ask(team, `hello from ${team}`);
    const port = h.bridge.ports.slack as MultiWorkspaceReplyPort;
    expect(port.installationPorts()).toBeLessThanOrEqual(MAX_PORTS);

    // The first workspace's port was dropped long ago: a new one answers, with its own token.
    const again = await ask(teams[0]!, 'hello again');
    expect(again.params.text).toContain('echo: hello again');
    const token = again.authorization?.replace(/^Bearer /, '') ?? again.params.token ?? '';
    expect(h.slack.oauth!.installFor(token)?.teamId).toBe(teams[0]);
    expect(port.installationPorts()).toBeLessThanOrEqual(MAX_PORTS);
  }, 120_000);
});
