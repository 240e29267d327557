import { randomBytes } from 'node:crypto';
import type { Bridge } from '../../../src/app.js';
import { startAgentEmulator, type AgentEmulator } from '../../../src/demo/agent-emulator.js';
import { slackPlatform } from '../../../adapters/slack/index.js';
import { discordPlatform } from '../../../adapters/discord/index.js';
import { startSlackEmulator, type SlackEmulator, type SlackTransport } from '../../emulators/slack/index.js';
import { startDiscordEmulator, type DiscordEmulator } from '../../emulators/discord/index.js';
import { newPrefix, startTestBridge } from '../../support/bridge-harness.js';
import type { LogCapture } from '../../support/log-capture.js';
import { discordEnv, slackEnv } from '../../support/platform-env.js';

/** Slack people and places of the emulated workspace (as test/slack/harness.ts has them). */
export const SW = { admin: 'UADMIN001', user: 'UUSER0001', general: 'C0GENERAL', dm: 'D0USER001' } as const;

/** A recognisable secret: unique per run, long enough to be registered for redaction. */
const canary = (name: string) => `canary-${name}-${randomBytes(9).toString('hex')}`;

/** Every secret the bridge is configured with, as canaries. */
export function makeCanaries() {
  return {
    AGENT_API_KEY: canary('agentkey'),
    AGENT_SESSION_COOKIE: `sid=${canary('cookie')}`,
    AGENT_SESSION_TOKEN: canary('sessiontoken'),
    SLACK_BOT_TOKEN: `xoxb-${canary('bot')}`,
    SLACK_SIGNING_SECRET: canary('signing'),
    SLACK_APP_TOKEN: `xapp-${canary('app')}`,
    DISCORD_TOKEN: `${canary('discord')}.MTIz.abc`,
    ADMIN_PASSWORD: canary('adminpw'),
    PLAYGROUND_TOKEN: canary('playground'),
  };
}
export type Canaries = ReturnType<typeof makeCanaries>;

export interface CanaryBridge {
  prefix: string;
  canaries: Canaries;
  slack: SlackEmulator;
  /** Signed HTTP or Socket Mode, per `mode`. */
  to: SlackTransport;
  discord: DiscordEmulator;
  agent: AgentEmulator;
  bridge: Bridge;
  logs: LogCapture;
  close(): Promise<void>;
}

/**
 * One bridge with Slack and Discord both running, every secret set to a canary value, logging
 * at trace into memory: the secrets suite searches everything it produces for the canaries.
 */
export async function startCanaryBridge(mode: 'http' | 'socket', env: Record<string, string> = {}): Promise<CanaryBridge> {
  const canaries = makeCanaries();
  const prefix = newPrefix('rsec');
  const agent = await startAgentEmulator({
    apiKey: canaries.AGENT_API_KEY,
    sessionCookie: canaries.AGENT_SESSION_COOKIE,
    sessionToken: canaries.AGENT_SESSION_TOKEN,
    reply: (_id, m) => `echo: ${m}`,
  });
  const slack = await startSlackEmulator({
    botToken: canaries.SLACK_BOT_TOKEN,
    signingSecret: canaries.SLACK_SIGNING_SECRET,
    appToken: canaries.SLACK_APP_TOKEN,
    users: [
      { id: SW.admin, name: 'Ada Admin' },
      { id: SW.user, name: 'Uma User' },
    ],
  });
  const discord = await startDiscordEmulator({ token: canaries.DISCORD_TOKEN });
  const t = await startTestBridge({
    prefix,
    agent,
    env: {
      AGENT_SESSION_COOKIE: canaries.AGENT_SESSION_COOKIE,
      AGENT_SESSION_TOKEN: canaries.AGENT_SESSION_TOKEN,
      ...slackEnv(slack, mode, { botToken: canaries.SLACK_BOT_TOKEN, signingSecret: canaries.SLACK_SIGNING_SECRET, appToken: canaries.SLACK_APP_TOKEN }),
      // Set in both modes: every configured secret is a canary to look for.
      SLACK_SIGNING_SECRET: canaries.SLACK_SIGNING_SECRET,
      SLACK_ADMIN_USER_IDS: SW.admin,
      ...discordEnv(discord, agent),
      ADMIN_USER: 'ops',
      ADMIN_PASSWORD: canaries.ADMIN_PASSWORD,
      PLAYGROUND_TOKEN: canaries.PLAYGROUND_TOKEN,
      JOB_ATTEMPTS: '2',
      BINDINGS: `slack:${SW.general}=demo-helper,slack:dm=demo-helper,discord:${discord.world.channels.general.id}=demo-helper,discord:dm=demo-helper`,
      LOG_LEVEL: 'trace',
      ...env,
    },
    platforms: [slackPlatform, discordPlatform],
    closeWith: [slack, discord],
  });
  const bridge = t.bridge;
  const eventsUrl = `http://127.0.0.1:${bridge.httpPort}/slack/events`;
  return {
    prefix,
    canaries,
    slack,
    to: mode === 'socket' ? slack.socketTransport : slack.http(eventsUrl),
    discord,
    agent,
    bridge,
    logs: t.logs,
    close: t.close,
  };
}
