import { WebClient, type WebClientOptions } from '@slack/web-api';
import type { Logger as SlackLogger } from '@slack/bolt';
import { Agent } from 'undici';
import { createUndiciFetch } from '../../src/undici-fetch.js';
import { ReplyPathWebClient } from './reply-path-client.js';

/** Slack's own Web API, used when SLACK_API_URL is not set. */
export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

/** `SLACK_API_URL` with the trailing slash the WebClient joins method names to. */
export function slackApiUrl(configured: string | undefined): string {
  const url = configured ?? DEFAULT_SLACK_API_URL;
  return url.endsWith('/') ? url : `${url}/`;
}

export interface SlackClientOptions {
  apiUrl?: string;
  logger: SlackLogger;
  /** Per-call limit. @defaultValue 10000 */
  timeoutMs?: number;
}

/** One connection pool for every WebClient of the process (one per workspace with "Add to Slack"). */
let sharedFetch: typeof fetch | undefined;
const processFetch = () => (sharedFetch ??= createUndiciFetch(new Agent({ keepAliveTimeout: 30_000 })));

/**
 * WebClient options for calls whose retries belong to someone else: the queue for reply
 * posts, the user for interactive calls (a trigger_id lasts 3 s). A 429 is rejected at once
 * with its Retry-After instead of pausing the client, and nothing is retried here.
 */
export function webClientOptions(options: SlackClientOptions): WebClientOptions {
  return {
    slackApiUrl: slackApiUrl(options.apiUrl),
    logger: options.logger,
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    timeout: options.timeoutMs ?? 10_000,
    fetch: processFetch(),
  };
}

/** A WebClient for the bot's token whose reply-path calls take the shorter road (reply-path-client.ts). */
export function createWebClient(token: string, options: SlackClientOptions): WebClient {
  const settings = webClientOptions(options);
  return new ReplyPathWebClient(
    { token, apiUrl: settings.slackApiUrl!, fetch: processFetch(), logger: options.logger, timeoutMs: settings.timeout ?? 0 },
    settings,
  );
}
