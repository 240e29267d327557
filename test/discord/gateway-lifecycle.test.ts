import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../emulators/discord/index.js';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';

/**
 * What Discord does to a running gateway connection, with a message sent while the shard is not
 * connected: it must be answered once, neither lost nor twice. Audit I.
 */
let h: DiscordHarness;
beforeAll(async () => {
  // A short heartbeat, so that a zombie connection is noticed within a few seconds.
  h = await startDiscordBridge({ emulator: { heartbeatIntervalMs: 1_000 }, agent: { reply: (_id, m) => `answer to: ${m}` } });
});
afterAll(async () => h?.close());

const w = () => h.discord.world;
const ask = (text: string): Json => h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: `${mention(h.discord)} ${text}` });

async function answeredOnce(m: Json, text: string): Promise<void> {
  await h.discord.waitFor(() => h.discord.repliesTo(m.id)[0], `the answer to ${text}`, 30_000);
  await new Promise((r) => setTimeout(r, 500));
  expect(h.discord.repliesTo(m.id).map((r) => r.content)).toEqual([`answer to: ${text}`]);
  expect(h.agent.chatCalls().filter((c) => JSON.stringify(c).includes(text))).toHaveLength(1);
}

describe('the gateway connection under what Discord does to it', () => {
  it('op 7 Reconnect: resumes, and the message sent meanwhile is answered once', async () => {
    const resumes = h.discord.gatewayStats.resumes;
    h.discord.requestReconnect();
    const m = ask('during op 7');
    await until(() => h.discord.gatewayStats.resumes > resumes, 'a RESUME');
    await answeredOnce(m, 'during op 7');
  });

  it('op 9 resumable: resumes, and the message sent meanwhile is answered once', async () => {
    const resumes = h.discord.gatewayStats.resumes;
    h.discord.invalidateSession(0, true);
    const m = ask('during op 9 true');
    await until(() => h.discord.gatewayStats.resumes > resumes, 'a RESUME');
    await answeredOnce(m, 'during op 9 true');
  });

  it('a zombie connection (no heartbeat ACK): discord.js reconnects and the message sent meanwhile is replayed and answered once', async () => {
    const resumes = h.discord.gatewayStats.resumes;
    h.discord.zombify();
    const m = ask('while the connection is a zombie');
    await until(() => h.discord.gatewayStats.resumes > resumes, 'a RESUME after the missed ACK', 15_000);
    await answeredOnce(m, 'while the connection is a zombie');
  });

  it('close 4000 (unknown error): resumes and answers what was sent meanwhile once', async () => {
    const resumes = h.discord.gatewayStats.resumes;
    h.discord.closeGateway(4000);
    const m = ask('after close 4000');
    await until(() => h.discord.gatewayStats.resumes > resumes, 'a RESUME');
    await answeredOnce(m, 'after close 4000');
  });

  // 4008 (rate limited) and the other codes discord.js answers with a new IDENTIFY leave the old session resumable.
  it.each([4008, 4003])(
    'close %i (discord.js identifies a new session): the message sent in the gap is caught up from the old session and answered once',
    async (code) => {
      const identifies = h.discord.gatewayStats.identifies;
      h.discord.closeGateway(code);
      // Sent before the new session exists (discord.js waits up to 5 s between IDENTIFYs): only the old session gets it.
      const m = ask(`in the gap after close ${code}`);
      await until(() => h.discord.gatewayStats.identifies > identifies, 'a new IDENTIFY', 15_000);
      // Before: never answered, and nothing logged.
      await answeredOnce(m, `in the gap after close ${code}`);
      await until(() => h.logs.matching(/caught up on its session before it identified again/).length > 0, 'the catch-up logged');
    },
  );

  it('op 9 not resumable: identifies again, says that what was sent meanwhile was lost, and answers the next message', async () => {
    const identifies = h.discord.gatewayStats.identifies;
    h.discord.invalidateSession(0, false);
    await until(() => h.discord.gatewayStats.identifies > identifies && h.discord.gatewayConnected, 'a new session', 15_000);
    await until(() => h.adapter.readiness().ok, 'ready again');
    const m = ask('after op 9 false');
    await answeredOnce(m, 'after op 9 false');
    expect(h.logs.matching(/closed for good/)).toEqual([]);
    await until(() => h.logs.matching(/ended the session this shard had before it identified again/).length > 0, 'the loss named in a warning');
  });
});
