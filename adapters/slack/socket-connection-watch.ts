import { errorFields, type Logger } from '../../src/logger.js';
import { slackErrorCode } from './errors.js';

/** The parts of @slack/socket-mode's client used here. */
export interface WatchedSocketModeClient {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  start(): Promise<unknown>;
}

/** What the operator must change when Slack gives each `disconnect` reason. */
const DISCONNECT_PROBLEMS: Readonly<Record<string, string>> = {
  link_disabled:
    "Slack turned Socket Mode off for this app (link_disabled): turn it on again in the app's settings (Socket Mode), or unset SLACK_APP_TOKEN and set SLACK_SIGNING_SECRET to receive Slack over HTTP; no Slack events arrive until then (the bridge keeps reconnecting)",
  too_many_websockets:
    'Slack refused a Socket Mode connection (too_many_websockets): an app has at most 10; another process (an old bridge?) uses the same SLACK_APP_TOKEN',
};

/**
 * Makes Socket Mode's silent failures visible. The client (3.1) logs Slack's `disconnect` reasons
 * at debug level only, so Socket Mode turned off in the app's settings is an endless quiet
 * reconnect loop; and a reconnect that Slack refuses for good (app token revoked: invalid_auth)
 * rejects a promise nobody holds, leaving a bridge that runs but hears nothing. Each such problem
 * gets one error line naming what to fix (again only after a connection worked in between).
 */
export function watchSocketConnection(client: WatchedSocketModeClient, logger: Logger): void {
  const told = new Set<string>();
  const tell = (problem: string, fields: Record<string, unknown> = {}) => {
    if (told.has(problem)) return;
    told.add(problem);
    logger.error(fields, problem);
  };
  client.on('connected', () => told.clear());
  client.on('ws_message', (data: unknown) => {
    const reason = disconnectReason(data);
    const problem = reason === undefined ? undefined : DISCONNECT_PROBLEMS[reason];
    if (problem) tell(problem);
  });

  // The first start is Bolt's (its caller sees the error); later ones are the client's reconnects.
  const start = client.start.bind(client);
  let starts = 0;
  client.start = () => {
    starts += 1;
    if (starts === 1) return start();
    return start().catch((err: unknown) => {
      // Rejected with nothing: the client was stopped while this reconnect waited.
      if (err === undefined) return undefined;
      const code = slackErrorCode(err);
      tell(
        `Slack refused SLACK_APP_TOKEN when reconnecting Socket Mode${code ? ` (${code})` : ''}: the app-level token was revoked or is no longer valid; create a new one with connections:write (Basic Information, App-Level Tokens), set SLACK_APP_TOKEN to it and restart. No Slack events arrive until then`,
        errorFields(err),
      );
      return undefined;
    });
  };
}

/** The `reason` of a Socket Mode `disconnect` message, if `data` is one. */
function disconnectReason(data: unknown): string | undefined {
  const text = typeof data === 'string' ? data : data instanceof ArrayBuffer || ArrayBuffer.isView(data) ? new TextDecoder().decode(data as ArrayBuffer) : undefined;
  if (!text?.includes('"disconnect"')) return undefined;
  try {
    const msg = JSON.parse(text) as { type?: unknown; reason?: unknown };
    return msg.type === 'disconnect' && typeof msg.reason === 'string' ? msg.reason : undefined;
  } catch {
    return undefined;
  }
}
