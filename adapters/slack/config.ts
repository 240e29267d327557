import { z } from 'zod';
import type { Config } from '../../src/config/load.js';
import { areSet, givenSettings, missingSetting, parseSettings, secretValues, type PlatformSettings } from '../../src/config/platform-settings.js';
import { bool, httpUrl, list, optionalString } from '../../src/config/schema.js';
import { pastedSecretProblems } from '../../src/config/pasted-secret.js';

/** "Add to Slack": Bolt's OAuth v2 installer, installations sealed in Redis. */
export interface SlackOAuthConfig {
  clientId: string;
  clientSecret: string;
  stateSecret: string;
}

export interface SlackConfig {
  /** Single-workspace mode; absent when `oauth` is set (each installation has its own token). */
  botToken?: string;
  oauth?: SlackOAuthConfig;
  signingSecret?: string;
  appToken?: string;
  apiUrl?: string;
  command: string;
  adminUserIds: string[];
  workspaceAdmins: boolean;
  workingReaction: string;
}

/**
 * Member IDs (`U…`, `W…` in Enterprise Grid). A name, `@handle` or e-mail matched nobody, so the
 * admins it meant were refused every admin command with no word of why: refused at start-up.
 */
const userIds = list.transform((ids, ctx) => {
  const wrong = ids.find((id) => !/^[UW][A-Z0-9]{1,20}$/.test(id));
  if (wrong === undefined) return ids;
  ctx.addIssue({
    code: 'custom',
    message: `SLACK_ADMIN_USER_IDS: \`${wrong.slice(0, 40)}\` is not a member ID. Give member IDs (U… or W…), comma-separated: open the person's profile → ⋯ → Copy member ID`,
  });
  return z.NEVER;
});

/** Every SLACK_* variable: the names are part of the product's interface (.env.example documents them). */
export const slackSchema = z.object({
  SLACK_BOT_TOKEN: optionalString,
  SLACK_SIGNING_SECRET: optionalString,
  SLACK_APP_TOKEN: optionalString,
  SLACK_API_URL: httpUrl('SLACK_API_URL'),
  SLACK_COMMAND: optionalString
    .transform((v) => v ?? '/agent')
    .refine((v) => /^\/[a-z0-9_-]{1,31}$/.test(v), { message: 'SLACK_COMMAND must look like /agent' }),
  SLACK_ADMIN_USER_IDS: userIds,
  SLACK_WORKSPACE_ADMINS: bool('SLACK_WORKSPACE_ADMINS', true),
  SLACK_WORKING_REACTION: optionalString
    .transform((v) => (v ?? 'eyes').replace(/:/g, ''))
    // The emoji itself (👀) or a name with spaces: Slack refused every reaction (invalid_name), with no sign in the chat.
    .refine((v) => /^[a-z0-9_+'-]{1,100}$/.test(v), {
      message: 'SLACK_WORKING_REACTION must be an emoji name such as eyes or hourglass_flowing_sand (lowercase, as in :eyes:), not the emoji character itself',
    }),
  // "Add to Slack" (OAuth v2, many workspaces): on when SLACK_CLIENT_ID is set.
  SLACK_CLIENT_ID: optionalString,
  SLACK_CLIENT_SECRET: optionalString,
  SLACK_STATE_SECRET: optionalString,
});

const FIX = {
  SLACK_BOT_TOKEN: 'set it to the Bot User OAuth Token (xoxb-...) from your Slack app, or set SLACK_CLIENT_ID for "Add to Slack"',
  SLACK_CLIENT_SECRET: 'set it to the Client Secret from your Slack app (Basic Information)',
  SLACK_STATE_SECRET: 'set it to a long random string (it signs the OAuth state: openssl rand -hex 32)',
  INSTALLATION_ENCRYPTION_KEY: 'set it to 32 random bytes (openssl rand -base64 32); installations and per-workspace agent keys are stored encrypted with it',
  SLACK_SIGNING_SECRET: 'set it to the Signing Secret from your Slack app (Basic Information), or set SLACK_APP_TOKEN to use Socket Mode',
};

/**
 * A Slack token in the wrong variable: a user token (`xoxp-`) posts as the person who installed
 * the app (and reads what they can read); the bot and app-level tokens swapped fail at the first
 * call. Slack's prefixes say which is which, so it is refused at start-up. Only the prefix is named.
 */
function tokenShapeProblems(botToken: string | undefined, appToken: string | undefined): string[] {
  const problems: string[] = [];
  const kind = (t: string | undefined) => (t === undefined ? undefined : /^(?:xoxe\.)?(xoxb|xoxp|xapp|xoxe)-/.exec(t)?.[1]);
  const bot = kind(botToken);
  const app = kind(appToken);
  const BOT_FIX = 'set it to the Bot User OAuth Token (xoxb-...) from your Slack app (OAuth & Permissions)';
  const APP_FIX = 'set it to an app-level token (xapp-...) with the connections:write scope (Basic Information, App-Level Tokens)';
  if (bot === 'xapp' && app === 'xoxb') {
    problems.push('SLACK_BOT_TOKEN and SLACK_APP_TOKEN are swapped: SLACK_BOT_TOKEN holds the app-level token (xapp-...) and SLACK_APP_TOKEN the bot token (xoxb-...); exchange their values');
    return problems;
  }
  if (bot === 'xoxp') problems.push(`SLACK_BOT_TOKEN is a user token (xoxp-...), which would act as the person who installed the app: ${BOT_FIX}`);
  else if (bot === 'xapp') problems.push(`SLACK_BOT_TOKEN is an app-level token (xapp-...), which belongs in SLACK_APP_TOKEN: ${BOT_FIX}`);
  else if (bot === 'xoxe') problems.push(`SLACK_BOT_TOKEN is a refresh token (xoxe-...): ${BOT_FIX}`);
  if (app === 'xoxb') problems.push(`SLACK_APP_TOKEN is a bot token (xoxb-...), which belongs in SLACK_BOT_TOKEN: ${APP_FIX}`);
  else if (app === 'xoxp' || app === 'xoxe') problems.push(`SLACK_APP_TOKEN is a ${app === 'xoxp' ? 'user token (xoxp-...)' : 'refresh token (xoxe-...)'}: ${APP_FIX}`);
  return problems;
}

/**
 * App Credentials' neighbours taken for each other: the App ID (A…) for the Client ID, which
 * failed only when someone installed the app; the Verification Token (24 characters) for the
 * Signing Secret (32 hex digits), which refused every request from Slack as unsigned.
 */
function credentialShapeProblems(clientId: string | undefined, signingSecret: string | undefined): string[] {
  const problems: string[] = [];
  if (clientId !== undefined && !/^\d+\.\d+$/.test(clientId)) {
    problems.push(`SLACK_CLIENT_ID must be the Client ID (digits, a dot, digits${/^A[A-Z0-9]+$/.test(clientId) ? '; this is the App ID' : ''}): copy it from your Slack app's Basic Information → App Credentials`);
  }
  if (signingSecret !== undefined && /^[A-Za-z0-9]{24}$/.test(signingSecret) && !/^[0-9a-f]+$/.test(signingSecret)) {
    problems.push("SLACK_SIGNING_SECRET looks like the Verification Token (24 characters): copy the Signing Secret (32 hex digits) from your Slack app's Basic Information → App Credentials");
  }
  return problems;
}

const present = (v: string | undefined) => v !== undefined && v.trim() !== '';
/** Any of these runs Slack; the other SLACK_ settings only shape it. */
const RUNS_SLACK = ['SLACK_BOT_TOKEN', 'SLACK_APP_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_CLIENT_ID'];

/** Slack's settings, read by the one config loader (src/config) through this module. */
export const slackSettings: PlatformSettings<SlackConfig> = {
  platform: 'slack',
  toRunForReal: { variables: 'SLACK_BOT_TOKEN + SLACK_SIGNING_SECRET', gives: 'Slack over HTTP (or SLACK_APP_TOKEN: Socket Mode)' },
  present: (env) => RUNS_SLACK.some((name) => present(env[name])),
  givenWithoutToken(env) {
    const given = givenSettings(slackSchema, env, RUNS_SLACK);
    if (given.length === 0) return undefined;
    // An OAuth app's secrets without its client ID: "Add to Slack" was meant.
    const oauth = given.includes('SLACK_CLIENT_SECRET') || given.includes('SLACK_STATE_SECRET');
    return missingSetting(
      oauth ? 'SLACK_CLIENT_ID' : 'SLACK_BOT_TOKEN',
      `${areSet(given)}, so Slack is meant to run`,
      `${oauth ? 'set it to the Client ID from your Slack app (Basic Information) for "Add to Slack"' : FIX.SLACK_BOT_TOKEN}, or remove ${given.join(', ')} to run without Slack`,
    );
  },
  bindingChannelProblem: (channelId) =>
    /^(?:dm:)?[A-Z0-9]{2,}$/.test(channelId)
      ? undefined
      : "a Slack channel is bound by its ID (C…), not its name: open the channel's details, the ID is at the bottom of About; dm stands for direct messages",
  load(env, context) {
    const { data: e, problems } = parseSettings(slackSchema, env);
    if (!e) return { problems, secrets: [] };
    const missing = (name: keyof typeof FIX, why: string) => problems.push(missingSetting(name, why, FIX[name]));
    const pasted = pastedSecretProblems([
      ['SLACK_BOT_TOKEN', e.SLACK_BOT_TOKEN, { sentAs: 'Authorization: Bearer <token>, adding "Bearer " itself' }],
      ['SLACK_APP_TOKEN', e.SLACK_APP_TOKEN],
      ['SLACK_SIGNING_SECRET', e.SLACK_SIGNING_SECRET],
      ['SLACK_CLIENT_ID', e.SLACK_CLIENT_ID],
      ['SLACK_CLIENT_SECRET', e.SLACK_CLIENT_SECRET],
    ]);
    problems.push(...pasted, ...tokenShapeProblems(e.SLACK_BOT_TOKEN, e.SLACK_APP_TOKEN), ...credentialShapeProblems(e.SLACK_CLIENT_ID, e.SLACK_SIGNING_SECRET));
    let oauth: SlackOAuthConfig | undefined;
    if (e.SLACK_CLIENT_ID) {
      if (!e.SLACK_CLIENT_SECRET) missing('SLACK_CLIENT_SECRET', 'SLACK_CLIENT_ID is set, so Slack installs over OAuth');
      if (!e.SLACK_STATE_SECRET) missing('SLACK_STATE_SECRET', 'SLACK_CLIENT_ID is set, so Slack installs over OAuth');
      if (!context.encryptionKeySet) missing('INSTALLATION_ENCRYPTION_KEY', 'SLACK_CLIENT_ID is set, and installations hold tokens');
      if (e.SLACK_BOT_TOKEN) problems.push('SLACK_BOT_TOKEN and SLACK_CLIENT_ID exclude each other: keep SLACK_BOT_TOKEN for one workspace, or SLACK_CLIENT_ID for "Add to Slack"');
      if (e.SLACK_CLIENT_SECRET && e.SLACK_STATE_SECRET) oauth = { clientId: e.SLACK_CLIENT_ID, clientSecret: e.SLACK_CLIENT_SECRET, stateSecret: e.SLACK_STATE_SECRET };
    }
    let settings: SlackConfig | undefined;
    if (e.SLACK_BOT_TOKEN || e.SLACK_APP_TOKEN || e.SLACK_SIGNING_SECRET || e.SLACK_CLIENT_ID) {
      if (!e.SLACK_BOT_TOKEN && !e.SLACK_CLIENT_ID) missing('SLACK_BOT_TOKEN', 'another SLACK_ setting is present');
      else if (!e.SLACK_APP_TOKEN && !e.SLACK_SIGNING_SECRET && context.role !== 'worker') missing('SLACK_SIGNING_SECRET', 'HTTP mode verifies every request from Slack');
      if (e.SLACK_BOT_TOKEN || oauth) {
        settings = {
          ...(oauth ? { oauth } : { botToken: e.SLACK_BOT_TOKEN }),
          signingSecret: e.SLACK_SIGNING_SECRET,
          appToken: e.SLACK_APP_TOKEN,
          apiUrl: e.SLACK_API_URL,
          command: e.SLACK_COMMAND,
          adminUserIds: e.SLACK_ADMIN_USER_IDS,
          workspaceAdmins: e.SLACK_WORKSPACE_ADMINS,
          workingReaction: e.SLACK_WORKING_REACTION,
        };
      }
    }
    return {
      ...(settings ? { settings } : {}),
      problems,
      secrets: secretValues(e.SLACK_BOT_TOKEN, e.SLACK_SIGNING_SECRET, e.SLACK_APP_TOKEN, e.SLACK_CLIENT_SECRET, e.SLACK_STATE_SECRET),
    };
  },
};

/** This process's Slack settings, when Slack is configured. */
export function slackConfigOf(config: Readonly<Config>): SlackConfig | undefined {
  return config.platforms.slack as SlackConfig | undefined;
}
