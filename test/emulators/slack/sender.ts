import { createHmac } from 'node:crypto';

/** How a request is signed: correctly, with the wrong secret, too old, or not at all. */
export type SignatureMode = 'valid' | 'bad' | 'stale' | 'missing';

export interface SignedResponse {
  status: number;
  /** Parsed JSON when the app answered JSON, else the text. */
  body: Record<string, unknown> | string;
  ms: number;
  /** `X-Slack-No-Retry` of the answer: '1' asks Slack not to redeliver a failed request. */
  noRetry?: string;
}

/** Slack's v0 signature of a request body. */
export function slackSignature(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

/**
 * Sends a request the way Slack does: `X-Slack-Request-Timestamp` and `X-Slack-Signature`
 * over the raw body, plus any extra headers (X-Slack-Retry-Num, ...).
 */
export async function sendSigned(
  url: string,
  secret: string,
  body: string,
  contentType: 'application/json' | 'application/x-www-form-urlencoded',
  mode: SignatureMode = 'valid',
  headers: Record<string, string> = {},
): Promise<SignedResponse> {
  const now = Math.floor(Date.now() / 1000);
  const timestamp = mode === 'stale' ? now - 6 * 60 : now;
  const signature = slackSignature(mode === 'bad' ? `${secret}-wrong` : secret, timestamp, body);
  const started = Date.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      ...(mode === 'missing' ? {} : { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signature }),
      'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
      ...headers,
    },
    body,
  });
  const text = await res.text();
  let parsed: Record<string, unknown> | string = text;
  if (res.headers.get('content-type')?.includes('application/json') && text) {
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = text;
    }
  }
  const noRetry = res.headers.get('x-slack-no-retry') ?? undefined;
  return { status: res.status, body: parsed, ms: Date.now() - started, ...(noRetry !== undefined ? { noRetry } : {}) };
}

/** A form body as Slack encodes slash commands. */
export function formBody(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** An interactivity payload: one form field `payload` holding JSON. */
export function interactionBody(payload: unknown): string {
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}
