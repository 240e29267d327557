import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';

/**
 * The bot token is reset in the Developer Portal while agent-bridge runs (a leaked token, a new
 * developer). Discord then refuses the old token everywhere: REST answers 401 and the gateway
 * closes the resuming connection with 4004, after which discord.js never reconnects. The operator
 * must read, in the log, which variable to change; before, the worker said "401: Unauthorized",
 * then "Expected token to be set for this request, but none was present" (retried as a network
 * error), and the gateway "closed for good" with the code alone. Audit I.
 */
const OLD_TOKEN = 'emulator-bot-token-before-reset-7c1f';
const NEW_TOKEN = 'emulator-bot-token-after-reset-93ab';

let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ emulator: { token: OLD_TOKEN }, env: { RETRY_BASE_DELAY_MS: '50', LOG_LEVEL: 'info' } });
});
afterAll(async () => h?.close());

describe('a bot token reset while the bridge runs', () => {
  it('names DISCORD_TOKEN for the refused reply and the closed gateway, never a token, and stops asking Discord', async () => {
    const w = h.discord.world;
    h.agent.setDelay(1_500);
    const since = Date.now();
    const asked = h.discord.sendMessage({ author: w.users.bob, channel: w.channels.general, content: `${mention(h.discord)} asked before the reset` });
    await until(() => h.agent.chatCalls().length > 0, 'the agent is asked');
    h.discord.resetToken(NEW_TOKEN);

    const gaveUp = await until(() => h.logs.matching(/gave up on a message/)[0], 'the worker gives up on the reply', 30_000);
    expect(JSON.stringify(gaveUp)).toContain(asked.id);
    const closed = await until(() => h.logs.matching(/discord gateway closed for good/)[0], 'the gateway closes', 30_000);
    expect(closed.code).toBe(4004);

    for (const line of [gaveUp, closed]) {
      expect(JSON.stringify(line)).toContain('DISCORD_TOKEN');
      expect(JSON.stringify(line)).toMatch(/Reset Token/);
    }
    expect(closed.level).toBe(50);
    // The failure notice is not sent with a token Discord refused (nor retried as a network error).
    expect(h.logs.text).not.toMatch(/Expected token to be set/);
    expect(h.logs.text).not.toContain(OLD_TOKEN);
    expect(h.logs.text).not.toContain(NEW_TOKEN);
    // One refused post: after a 401 nothing more is sent with the old token (Discord bans an IP after 10,000 invalid requests).
    await new Promise((r) => setTimeout(r, 1_000));
    const refused = h.discord.calls.filter((c) => c.at >= since && c.status === 401);
    expect(refused.map((c) => `${c.method} ${c.path}`)).toEqual([`POST /channels/${w.channels.general.id}/messages`]);
  });
});
