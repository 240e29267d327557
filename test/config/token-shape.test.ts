import { describe, expect, it } from 'vitest';
import { loadTestConfig } from '../support/config.js';
import { configProblem } from '../support/config-problem.js';

const real = { AGENT_API_BASE_URL: 'https://openhelixai.com/api/v1', AGENT_API_KEY: 'key-1234' };
const slackHttp = { ...real, SLACK_SIGNING_SECRET: 'sign-secret-1234' };

/** The refusal, checked not to show the pasted value (nor its middle, the secret part). */
function refusal(env: Record<string, string>, ...secrets: string[]): string {
  const p = configProblem(env);
  for (const s of secrets) expect(p).not.toContain(s);
  return p;
}

describe('token shapes at start-up', () => {
  it('refuses a user token (xoxp-) in SLACK_BOT_TOKEN, naming the variable and the bot token to use', () => {
    const p = refusal({ ...slackHttp, SLACK_BOT_TOKEN: 'xoxp-1111-2222-secretpart' }, 'secretpart');
    expect(p).toMatch(/SLACK_BOT_TOKEN is a user token \(xoxp-\.\.\.\).*Bot User OAuth Token \(xoxb-\.\.\.\)/);
  });

  it('names the bot and app tokens swapped', () => {
    const p = refusal({ ...real, SLACK_BOT_TOKEN: 'xapp-1-A111-secretapp', SLACK_APP_TOKEN: 'xoxb-1-2-secretbot' }, 'secretapp', 'secretbot');
    expect(p).toMatch(/SLACK_BOT_TOKEN and SLACK_APP_TOKEN are swapped/);
    expect(p).toMatch(/exchange their values/);
  });

  it('refuses an app-level token in SLACK_BOT_TOKEN, and a bot token in SLACK_APP_TOKEN, each alone', () => {
    expect(refusal({ ...slackHttp, SLACK_BOT_TOKEN: 'xapp-1-A111-secretapp' }, 'secretapp')).toMatch(/SLACK_BOT_TOKEN is an app-level token \(xapp-\.\.\.\), which belongs in SLACK_APP_TOKEN/);
    expect(refusal({ ...real, SLACK_BOT_TOKEN: 'xoxb-1-good', SLACK_APP_TOKEN: 'xoxb-1-2-secretbot' }, 'secretbot')).toMatch(/SLACK_APP_TOKEN is a bot token \(xoxb-\.\.\.\).*xapp-/);
  });

  it('refuses "Bot " pasted into DISCORD_TOKEN (the gateway took it, every reply of the workers failed with 401)', () => {
    for (const token of ['Bot MTIz.secretdiscord.abc', 'bot MTIz.secretdiscord.abc', 'Bearer MTIz.secretdiscord.abc']) {
      const p = refusal({ ...real, DISCORD_TOKEN: token }, 'secretdiscord');
      expect(p).toMatch(/DISCORD_TOKEN starts with "(Bot|bot|Bearer) ": give the secret alone/);
    }
  });

  it("refuses the Developer Portal's application ID or public key in DISCORD_TOKEN", () => {
    expect(refusal({ ...real, DISCORD_TOKEN: '1122334455667788990' }, '1122334455667788990')).toMatch(/DISCORD_TOKEN is an application ID \(digits only\), not the bot token: .*Reset Token/);
    expect(refusal({ ...real, DISCORD_TOKEN: 'ab'.repeat(32) }, 'abab')).toMatch(/DISCORD_TOKEN is the application's public key/);
  });

  it('still takes the real shapes (rotating tokens too) and tokens of no known shape', () => {
    expect(loadTestConfig({ ...real, SLACK_BOT_TOKEN: 'xoxb-1-2-abc', SLACK_APP_TOKEN: 'xapp-1-A1-abc' }).platforms.slack).toBeDefined();
    expect(loadTestConfig({ ...slackHttp, SLACK_BOT_TOKEN: 'xoxe.xoxb-1-abc' }).platforms.slack).toBeDefined();
    expect(loadTestConfig({ ...slackHttp, SLACK_BOT_TOKEN: 'emulated-bot-token' }).platforms.slack).toBeDefined();
    expect(loadTestConfig({ ...real, DISCORD_TOKEN: 'MTIz.abc.def' }).platforms.discord).toBeDefined();
  });
});

describe('secrets pasted with their quotes or scheme', () => {
  it('refuses quotes around a token, naming the variable and the fix', () => {
    for (const [name, value, env] of [
      ['SLACK_BOT_TOKEN', '"xoxb-1-2-secretq"', slackHttp],
      ['SLACK_BOT_TOKEN', "'xoxb-1-2-secretq'", slackHttp],
      ['SLACK_SIGNING_SECRET', '"secretq"', { ...real, SLACK_BOT_TOKEN: 'xoxb-1' }],
      ['DISCORD_TOKEN', '"MTIz.secretq.x"', real],
      ['AGENT_API_KEY', '"secretq-key"', real],
      ['AGENT_API_KEY', 'secretq-key"', real],
      ['AGENT_SESSION_TOKEN', "'secretq'", real],
    ] as const) {
      const p = refusal({ ...env, [name]: value }, 'secretq');
      expect(p).toContain(`${name} is wrapped in quotes`);
      expect(p).toMatch(/remove the quotes/);
    }
  });

  it('refuses "Bearer " before the agent API key and the session token', () => {
    const key = refusal({ ...real, AGENT_API_KEY: 'Bearer secret-key-9' }, 'secret-key-9');
    expect(key).toMatch(/AGENT_API_KEY starts with "Bearer ": give the secret alone, without "Bearer " \(agent-bridge sends it as the X-API-Key header\)/);
    expect(refusal({ ...real, AGENT_SESSION_TOKEN: 'Bearer secret-s-9' }, 'secret-s-9')).toMatch(/AGENT_SESSION_TOKEN starts with "Bearer "/);
  });

  it('refuses a token with a space or a line break in it', () => {
    expect(refusal({ ...real, AGENT_API_KEY: 'secret-a\nsecret-b' }, 'secret-a', 'secret-b')).toMatch(/AGENT_API_KEY contains a space or a line break/);
  });

  it('takes a session cookie with a quoted value or several cookies, and refuses one pasted with "Cookie:"', () => {
    expect(loadTestConfig({ ...real, AGENT_SESSION_COOKIE: 'session="abc"; theme=dark' }).agent?.sessionCookie).toBe('session="abc"; theme=dark');
    expect(refusal({ ...real, AGENT_SESSION_COOKIE: 'Cookie: session=secretc' }, 'secretc')).toMatch(/AGENT_SESSION_COOKIE starts with "Cookie:"/);
    expect(refusal({ ...real, AGENT_SESSION_COOKIE: '"session=secretc"' }, 'secretc')).toMatch(/AGENT_SESSION_COOKIE is wrapped in quotes/);
  });
});

describe('AGENT_TIMEOUT_MS', () => {
  it('warns at start-up below 5 seconds, naming the variable, and not at or above', () => {
    const c = loadTestConfig({ ...real, AGENT_TIMEOUT_MS: '1000' });
    expect(c.agent?.timeoutMs).toBe(1000);
    expect(c.warnings).toEqual([expect.stringMatching(/^AGENT_TIMEOUT_MS is 1000 \(under 5 seconds\).*billed/)]);
    expect(loadTestConfig({ ...real, AGENT_TIMEOUT_MS: '5000' }).warnings).toEqual([]);
    expect(loadTestConfig(real).warnings).toEqual([]);
  });
});

describe('whole-number settings', () => {
  it('take digits only, naming the variable', () => {
    for (const value of ['1e3', '0x10', '5 0', '50ms', '5.0', '+5', '0b11', '1_000', '50\u00a0ms']) {
      expect(configProblem({ ...real, WORKER_CONCURRENCY: value })).toMatch(/WORKER_CONCURRENCY must be a whole number from 1 to 100000, in digits only/);
    }
    expect(configProblem({ ...real, DISCORD_TOKEN: 'MTIz.a.b', DISCORD_SHARD_COUNT: '1e1' })).toMatch(/DISCORD_SHARD_COUNT must be auto or a whole number/);
    expect(loadTestConfig({ ...real, WORKER_CONCURRENCY: '0050' }).queue.concurrency).toBe(50);
    // Spaces around are trimmed, as for every setting (a Windows line ending in an env file given to docker).
    expect(loadTestConfig({ ...real, WORKER_CONCURRENCY: ' 50 ' }).queue.concurrency).toBe(50);
    expect(loadTestConfig({ ...real, WORKER_CONCURRENCY: '50\r' }).queue.concurrency).toBe(50);
    expect(loadTestConfig({ ...real, WORKER_CONCURRENCY: '' }).queue.concurrency).toBe(50);
  });
});

describe('DISCORD_GUILD_ID', () => {
  it('takes a server ID only, naming the variable and where to copy it', () => {
    for (const value of ['My Server', 'https://discord.com/channels/900000000000000001/930000000000000001', '<#900000000000000001>', '12']) {
      expect(configProblem({ ...real, DISCORD_TOKEN: 'MTIz.a.b', DISCORD_GUILD_ID: value })).toMatch(/DISCORD_GUILD_ID must be a server ID \(digits\).*Copy Server ID/);
    }
    expect(loadTestConfig({ ...real, DISCORD_TOKEN: 'MTIz.a.b', DISCORD_GUILD_ID: ' 900000000000000001 ' }).platforms.discord).toMatchObject({ guildId: '900000000000000001' });
  });
});

describe('Slack admins and reaction', () => {
  const slack = { ...real, SLACK_BOT_TOKEN: 'xoxb-1-2', SLACK_SIGNING_SECRET: 'sign-1234' };
  it('takes member IDs only in SLACK_ADMIN_USER_IDS, naming the wrong entry and where to copy an ID', () => {
    for (const value of ['@alice', 'alice@example.com', 'U0ADMIN1, Alice Smith', '<@U0ADMIN1>', 'u0admin1']) {
      expect(configProblem({ ...slack, SLACK_ADMIN_USER_IDS: value })).toMatch(/SLACK_ADMIN_USER_IDS: `.+` is not a member ID\. .*Copy member ID/);
    }
    expect(loadTestConfig({ ...slack, SLACK_ADMIN_USER_IDS: 'U0ADMIN1, W0GRID2' }).platforms.slack).toMatchObject({ adminUserIds: ['U0ADMIN1', 'W0GRID2'] });
  });

  it('takes an emoji name in SLACK_WORKING_REACTION, not the emoji itself', () => {
    for (const value of ['👀', 'eyes please', 'Eyes']) {
      expect(configProblem({ ...slack, SLACK_WORKING_REACTION: value })).toMatch(/SLACK_WORKING_REACTION must be an emoji name/);
    }
    for (const [value, name] of [[':eyes:', 'eyes'], ['hourglass_flowing_sand', 'hourglass_flowing_sand'], ['+1', '+1'], ['', 'eyes']]) {
      expect(loadTestConfig({ ...slack, SLACK_WORKING_REACTION: value }).platforms.slack).toMatchObject({ workingReaction: name });
    }
  });
});

describe('BINDINGS channels', () => {
  it("refuses a channel's name where its ID belongs, naming the entry and where to copy the ID", () => {
    const env = { ...real, SLACK_BOT_TOKEN: 'xoxb-1-2', SLACK_SIGNING_SECRET: 'sign-1234', DISCORD_TOKEN: 'MTIz.a.b' };
    expect(configProblem({ ...env, BINDINGS: 'slack:#general=inst_a' })).toMatch(/BINDINGS entry "slack:#general=…": a Slack channel is bound by its ID \(C…\), not its name/);
    expect(configProblem({ ...env, BINDINGS: 'slack:C0123=inst_a,discord:general=inst_b' })).toMatch(/BINDINGS entry "discord:general=…": a Discord channel is bound by its ID \(digits\).*Copy Channel ID/);
    expect(configProblem({ ...env, BINDINGS: 'discord:<#998877>=inst_b' })).toMatch(/BINDINGS entry "discord:<#998877>=…"/);
    expect(loadTestConfig({ ...env, BINDINGS: 'slack:C0123=inst_a,discord:998877=inst_b,slack:dm=inst_a,slack:dm:T0TEAM1=inst_a,discord:dm=inst_b' }).bindings).toHaveLength(5);
  });
});

describe('AGENT_API_BASE_URL', () => {
  it('refuses an endpoint address (…/chat, …/instances) where the base address belongs', () => {
    for (const url of ['https://openhelixai.com/api/v1/chat', 'https://openhelixai.com/api/v1/instances/', 'https://openhelixai.com/api/v1/Chat']) {
      const p = configProblem({ ...real, AGENT_API_BASE_URL: url });
      expect(p).toMatch(/AGENT_API_BASE_URL ends with \/(chat|instances|Chat), an endpoint: give the base address/);
      expect(p).not.toMatch(/AGENT_API_BASE_URL is missing/);
    }
    expect(loadTestConfig({ ...real, AGENT_API_BASE_URL: 'https://chat.example.com/api/v1' }).agent?.baseUrl).toBe('https://chat.example.com/api/v1');
  });
});

describe('Slack app credentials', () => {
  it('refuses the App ID as SLACK_CLIENT_ID and the Verification Token as SLACK_SIGNING_SECRET', () => {
    const oauth = { ...real, SLACK_CLIENT_SECRET: 'client-secret', SLACK_STATE_SECRET: 'state-secret-0123456789', INSTALLATION_ENCRYPTION_KEY: 'a'.repeat(64), SLACK_SIGNING_SECRET: 'sign-1234' };
    expect(configProblem({ ...oauth, SLACK_CLIENT_ID: 'A0123ABCDEF' })).toMatch(/SLACK_CLIENT_ID must be the Client ID \(digits, a dot, digits; this is the App ID\)/);
    expect(loadTestConfig({ ...oauth, SLACK_CLIENT_ID: '1111.2222' }).platforms.slack).toBeDefined();
    const token = 'AbCdEfGhIjKlMnOpQrStUvWx';
    expect(refusal({ ...real, SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: token }, token)).toMatch(/SLACK_SIGNING_SECRET looks like the Verification Token/);
    expect(loadTestConfig({ ...real, SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: '0123456789abcdef0123456789abcdef' }).platforms.slack).toBeDefined();
  });
});
