import type { ExpressReceiverOptions } from '@slack/bolt';
import type { SlackConfig } from './config.js';
import type { SealedBox } from '../../src/crypto/sealed-box.js';
import type { Logger } from '../../src/logger.js';
import type { SlackInstallations } from './installations.js';
import { slackApiUrl } from './web-client.js';

/** "Add to Slack" starts here (a GET: Bolt redirects to Slack's consent page). */
export const SLACK_INSTALL_PATH = '/slack/install';
/** Slack sends the browser back here with the code (a GET, no Slack signature). */
export const SLACK_OAUTH_REDIRECT_PATH = '/slack/oauth_redirect';

/** The bot scopes an install asks for: the same list as the manifests (a test holds them equal). */
export const SLACK_BOT_SCOPES = [
  'app_mentions:read',
  'channels:history',
  'groups:history',
  'im:history',
  'mpim:history',
  'channels:read',
  'groups:read',
  'im:read',
  'mpim:read',
  'chat:write',
  'im:write',
  'reactions:write',
  'users:read',
  'commands',
  'assistant:write',
  'files:read',
];

/**
 * Bolt's own OAuth v2 installer on the ExpressReceiver: it mounts GET /slack/install and
 * GET /slack/oauth_redirect next to POST /slack/events, checks the signed state (cookie and
 * SLACK_STATE_SECRET), exchanges the code, and saves the installation in `store`. Rotating
 * tokens are refreshed by the same installer when an event is authorized.
 */
export function oauthReceiverOptions(slack: SlackConfig, store: SlackInstallations): Partial<ExpressReceiverOptions> {
  const oauth = slack.oauth!;
  return {
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    stateSecret: oauth.stateSecret,
    installationStore: store,
    scopes: SLACK_BOT_SCOPES,
    installerOptions: {
      installPath: SLACK_INSTALL_PATH,
      redirectUriPath: SLACK_OAUTH_REDIRECT_PATH,
      // Straight to Slack's consent page: no intermediate "Add to Slack" page to click.
      directInstall: true,
      clientOptions: { slackApiUrl: slackApiUrl(slack.apiUrl) },
      // Slack's consent page lives next to its Web API (the emulator's in tests).
      ...(slack.apiUrl ? { authorizationUrl: new URL('/oauth/v2/authorize', slackApiUrl(slack.apiUrl)).toString() } : {}),
    },
  };
}

export type { SealedBox, Logger };
