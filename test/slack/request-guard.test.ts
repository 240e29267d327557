import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { slackSignature, sendSigned } from '../emulators/slack/sender.js';
import { postHead, rawRequest, type RawClient } from '../support/raw-http.js';
import { startSlackBridge, type SlackHarness } from './harness.js';

const FOUR_MB = 4 * 1024 * 1024;
const now = () => Math.floor(Date.now() / 1000);
/** A well-formed signature (of some other body): only Bolt, after reading the body, can tell it is wrong. */
const someSignature = (ts: number) => slackSignature('not-the-secret', ts, '{}');

describe('Slack over HTTP: requests that cannot be from Slack are refused before their body is read', () => {
  let h: SlackHarness;
  let port: number;
  const clients: RawClient[] = [];

  beforeAll(async () => {
    h = await startSlackBridge({ mode: 'http' });
    port = h.bridge.httpPort;
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.socket.destroy();
  });
  afterAll(async () => {
    await h.close();
  });

  /** Sends the headers of a 4 MB POST and none of its body; resolves with the answer's status once the connection closed. */
  async function headersOnly(headers: Record<string, string>, length = FOUR_MB): Promise<number> {
    const c = await rawRequest(port, postHead('/slack/events', length, headers));
    clients.push(c);
    const status = await c.status();
    await c.closed;
    return status;
  }

  it('refuses a request without signature headers with 401, without waiting for its 4 MB body', async () => {
    expect(await headersOnly({})).toBe(401);
    expect(await headersOnly({ 'X-Slack-Request-Timestamp': String(now()) })).toBe(401);
    expect(await headersOnly({ 'X-Slack-Signature': someSignature(now()) })).toBe(401);
    expect(await headersOnly({ 'X-Slack-Signature': 'v0=zz', 'X-Slack-Request-Timestamp': String(now()) })).toBe(401);
  });

  it('refuses a timestamp more than 5 minutes old or more than 5 minutes ahead with 401, body unread', async () => {
    for (const ts of [now() - 6 * 60, now() + 6 * 60, 0]) {
      expect(await headersOnly({ 'X-Slack-Signature': someSignature(ts), 'X-Slack-Request-Timestamp': String(ts) })).toBe(401);
    }
    expect(await headersOnly({ 'X-Slack-Signature': someSignature(now()), 'X-Slack-Request-Timestamp': 'soon' })).toBe(401);
  });

  it('refuses a fresh, well-formed request announcing more than 1 MB with 413, body unread', async () => {
    const ts = now();
    expect(await headersOnly({ 'X-Slack-Signature': someSignature(ts), 'X-Slack-Request-Timestamp': String(ts) }, 1_000_001)).toBe(413);
  });

  it('stops reading a chunked body at 1 MB (413)', async () => {
    const ts = now();
    const head = [
      'POST /slack/events HTTP/1.1',
      'Host: 127.0.0.1',
      'Content-Type: application/json',
      'Transfer-Encoding: chunked',
      `X-Slack-Signature: ${someSignature(ts)}`,
      `X-Slack-Request-Timestamp: ${ts}`,
    ].join('\r\n');
    const c = await rawRequest(port, `${head}\r\n\r\n`);
    clients.push(c);
    const chunk = Buffer.alloc(256 * 1024, 'a');
    // Write up to 2 MB; the answer comes once the limit is crossed.
    let status: number | undefined;
    void c.status().then((s) => (status = s), () => {});
    for (let sent = 0; sent < 2 * 1024 * 1024 && status === undefined && !c.socket.destroyed; sent += chunk.length) {
      await new Promise<void>((resolve) => c.socket.write(`${chunk.length.toString(16)}\r\n`, () => c.socket.write(chunk, () => c.socket.write('\r\n', () => resolve()))));
    }
    expect(await c.status()).toBe(413);
  });

  it('still accepts a signed request from Slack', async () => {
    const body = JSON.stringify({ type: 'url_verification', challenge: 'abc123', token: 'x' });
    const res = await sendSigned(h.eventsUrl, h.slack.identity.signingSecret, body, 'application/json');
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).toContain('abc123');
    // A correctly formed but wrongly signed one is refused by Bolt after reading it.
    expect((await sendSigned(h.eventsUrl, h.slack.identity.signingSecret, body, 'application/json', 'bad')).status).toBe(401);
  });
});
