import type { AgentEmulator } from '../../src/demo/agent-emulator.js';
import type { DiscordEmulator } from '../emulators/discord/index.js';
import type { SlackEmulator } from '../emulators/slack/index.js';

/**
 * The settings of a bridge on the Discord emulator: its guild and admin role, `general` and DMs
 * bound to demo-helper, and (with `session`) the agent emulator's dashboard session.
 */
export function discordEnv(discord: DiscordEmulator, agent: AgentEmulator, session?: boolean): Record<string, string> {
  const w = discord.world;
  return {
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_GUILD_ID: w.guildId,
    DISCORD_ADMIN_ROLE_IDS: w.adminRoleId,
    BINDINGS: `discord:${w.channels.general.id}=demo-helper,discord:dm=demo-helper`,
    ...(session ? { AGENT_SESSION_COOKIE: agent.sessionCookie } : {}),
  };
}

/**
 * The settings of a bridge on the Slack emulator: its bot token and API address, and the
 * signing secret (HTTP) or the app token (Socket Mode).
 */
export function slackEnv(
  slack: SlackEmulator,
  mode: 'http' | 'socket',
  tokens: { botToken: string; signingSecret: string; appToken: string },
): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: tokens.botToken,
    ...(mode === 'socket' ? { SLACK_APP_TOKEN: tokens.appToken } : { SLACK_SIGNING_SECRET: tokens.signingSecret }),
    SLACK_API_URL: slack.apiUrl,
  };
}
