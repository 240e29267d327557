import type { PlatformModule } from '../../src/core/platform-context.js';
import { createSlackAdapter } from './adapter.js';
import { slackConfigOf } from './config.js';
import { createSlackReplyPort } from './reply-port.js';

export { createSlackAdapter, SLACK_EVENTS_PATH, type SlackAdapter, type SlackAdapterOptions } from './adapter.js';
export { createSlackReplyPort, type SlackReplyPortOptions } from './reply-port.js';
export { renderSlackReply, SLACK_CHUNK_CHARS } from './render.js';
export { markdownToMrkdwn } from './mrkdwn.js';
export { normaliseSlackEvent, type BotIdentity } from './normalise.js';

/**
 * Slack as the composition root sees it: workers call `createReplyPort` (Web API only); the
 * ingress process also calls `createAdapter` (Bolt over Socket Mode or on POST /slack/events).
 */
export const slackPlatform: PlatformModule = {
  platform: 'slack',
  vocabulary: (config) => ({ workspace: 'workspace', command: slackConfigOf(config)?.command ?? '/agent' }),
  createReplyPort: (deps) => createSlackReplyPort(deps),
  createAdapter: (ctx) => createSlackAdapter(ctx),
};
