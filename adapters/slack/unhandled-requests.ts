import type { App, ReceiverUnhandledRequestHandlerArgs } from '@slack/bolt';
import type { Logger } from '../../src/logger.js';

/**
 * When Bolt's ExpressReceiver asks whether a request is unhandled. Bolt decides at once that it
 * cannot dispatch a body; requests it does dispatch keep the rest of Slack's 3 s for their ack.
 */
export const UNHANDLED_CHECK_MS = 200;
/** Bolt's own wait before it gives up on an ack (HTTPResponseAck's default). */
const BOLT_ACK_WAIT_MS = 3_001;

type Body = Record<string, unknown> | undefined;

/** Whether Bolt finds listeners' kind for a body (its helpers' getTypeAndConversation, read as it is in Bolt 5). */
function boltDispatches(body: Body): boolean {
  if (!body) return false;
  if (body.event !== undefined || body.command !== undefined || body.name !== undefined || body.actions !== undefined) return true;
  return ['block_suggestion', 'dialog_submission', 'shortcut', 'message_action', 'view_submission', 'view_closed'].includes(textOf(body.type));
}

/** A field as text only when it is one: a hostile body's `{ toString: null }` must not throw here. */
const textOf = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The minute Slack names in `app_rate_limited` (epoch seconds of its start), as an ISO time. */
function minuteOf(value: unknown): string | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000).toISOString() : undefined;
}

/**
 * The ExpressReceiver's `unhandledRequestHandler` (with `unhandledRequestTimeoutMillis:
 * UNHANDLED_CHECK_MS`): a signed body Bolt has no listener kind for (Slack's `app_rate_limited`
 * callback, `{}`) is answered 200 at once instead of 404 after 3 s; `app_rate_limited` is logged
 * as a warning naming the team and the minute. Anything else keeps Bolt's behaviour: its
 * listener has until 3 s to ack, then Bolt's error and a 404.
 */
export function unhandledRequestHandler(logger: Logger): (args: ReceiverUnhandledRequestHandlerArgs) => void {
  return ({ request, response }) => {
    const body = (request as { body?: Body }).body;
    if (response.headersSent || response.writableEnded) return;
    if (boltDispatches(body)) {
      setTimeout(() => {
        if (response.headersSent || response.writableEnded) return;
        logger.error('a Slack request was not acknowledged within 3 seconds; answered 404');
        response.writeHead(404).end();
      }, BOLT_ACK_WAIT_MS - UNHANDLED_CHECK_MS).unref();
      return;
    }
    if (body?.type === 'app_rate_limited') {
      const minute = minuteOf(body.minute_rate_limited);
      logger.warn(
        { team: textOf(body.team_id), minute, apiAppId: textOf(body.api_app_id) },
        `Slack is rate limiting this app's events for team ${textOf(body.team_id)}${minute ? ` in the minute from ${minute}` : ''} (app_rate_limited): events of that minute may not be delivered`,
      );
    } else {
      logger.debug({ type: textOf(body?.type) }, 'a signed Slack request of no known kind; answered 200');
    }
    response.writeHead(200).end();
  };
}

/**
 * Acks for what the bridge has no listener of its own for, so Slack shows no error and nothing
 * waits 3 s: a modal submitted or closed that the bridge did not open (ours are `ownViews`),
 * and options requests (`block_suggestion`; the bridge's views have no external selects).
 */
export function ackForeignViews(app: App, ownViews: readonly string[]): void {
  const notOurs = new RegExp(`^(?!(?:${ownViews.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$)`);
  app.view({ type: 'view_submission', callback_id: notOurs }, async ({ ack }) => ack());
  app.view({ type: 'view_closed', callback_id: /.*/ }, async ({ ack }) => ack());
  app.options(/.*/, async ({ ack }) => ack({ options: [] }));
}
