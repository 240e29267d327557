import { describe, expect, it } from 'vitest';
import { openForAll } from '../support/open-for-all.js';
import { startDiscordBridge, type DiscordHarness } from './harness.js';
import type { EmuChannel, EmuInteraction, EmuUser } from '../emulators/discord/index.js';

const EPHEMERAL = 64;

/** The private answer once it is complete: the original response, edited if it was deferred. */
function answerOf(h: DiscordHarness, i: EmuInteraction, label: string): Promise<string> {
  return h.discord.waitFor(() => (i.original?.content ? i.original.content : undefined), label);
}

function run(h: DiscordHarness, user: EmuUser, subcommand: string, options: Record<string, string>, channel: EmuChannel) {
  return h.discord.runCommand({ user, channel, subcommand, options });
}

describe('/agent credential without a dashboard session', () => {
  let h: DiscordHarness;
  openForAll(async () => (h = await startDiscordBridge({ session: false })));
  const w = () => h.discord.world;

  it('answers at once, privately, what the operator must set, and opens no form', async () => {
    const i = run(h, w().users.alice, 'credential', { instance: 'demo-helper' }, w().channels.general);
    const text = await answerOf(h, i, 'no-session answer');
    expect(i.original?.flags).toBe(EPHEMERAL);
    expect(text).toMatch(/needs a dashboard session/);
    expect(text).toContain('AGENT_SESSION_COOKIE');
    expect(i.responses.some((r) => r.type === 9)).toBe(false);
  });
});
