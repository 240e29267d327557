import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botMention, chatCalls, logLines, say, startSlackBridge, until, W, type SlackHarness } from '../slack/harness.js';

/**
 * Keys that occur twice in one object of a JSON text. `JSON.parse` silently keeps the last
 * one, so this walks the text itself.
 */
export function duplicateKeys(json: string): string[] {
  const found: string[] = [];
  const stack: Array<Set<string> | null> = [];
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      let j = i + 1;
      while (json[j] !== '"') j += json[j] === '\\' ? 2 : 1;
      const keys = stack[stack.length - 1];
      if (expectKey && keys) {
        const key = json.slice(i + 1, j);
        if (keys.has(key)) found.push(key);
        keys.add(key);
        expectKey = false;
      }
      i = j;
    } else if (c === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (c === '[') {
      stack.push(null);
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      expectKey = stack[stack.length - 1] !== null;
    }
  }
  return found;
}

describe('duplicateKeys', () => {
  it('finds a repeated key, at any depth, and nothing in clean JSON', () => {
    expect(duplicateKeys('{"a":1,"platform":"slack","b":{"x":"}","y":[{"z":1}]},"platform":"slack"}')).toEqual(['platform']);
    expect(duplicateKeys('{"a":{"k":1,"k":2},"k":3}')).toEqual(['k']);
    expect(duplicateKeys('{"a":"\\"a\\"","b":[1,"a"],"c":{"a":1}}')).toEqual([]);
  });
});

describe('log lines (the Slack bridge, real Bolt against the emulator)', () => {
  let h: SlackHarness;

  beforeAll(async () => {
    // debug, so the Slack SDK's own lines are in the capture too.
    h = await startSlackBridge({ mode: 'socket', env: { LOG_LEVEL: 'debug' } });
  }, 30_000);
  afterAll(async () => {
    await h?.close();
  });

  it('one line per answered message (conversation, instance, agent latency, chunks) without its content', async () => {
    const secretWords = 'the-words-of-this-message-stay-out-of-logs';
    await say(h, { channel: W.general, text: `${botMention(h)} ${secretWords}` });
    const [line] = await until(() => {
      const lines = logLines(h, /^message answered$/);
      return lines.length > 0 && lines;
    }, 'a "message answered" line');
    expect(chatCalls(h)).toHaveLength(1);
    expect(line).toMatchObject({ level: 30, platform: 'slack', instanceId: 'demo-helper', chunks: 1 });
    expect(line!.conversationId).toEqual(expect.stringContaining(W.general));
    expect(typeof line!.agentMs).toBe('number');
    const infoAndAbove = h.logs.lines.filter((l) => (JSON.parse(l) as { level: number }).level >= 30);
    expect(infoAndAbove.join('\n')).not.toContain(secretWords);
    expect(logLines(h, /^message answered$/)).toHaveLength(1);
  }, 30_000);

  it('one line per admin action (bind, set, unbind)', async () => {
    const channel = W.free;
    for (const text of ['bind demo-poet all', 'set errors silent', 'unbind']) {
      const ack = await h.to.command({ text, user: W.admin, channel });
      const answer = await h.slack.waitForCall('response_url', (c) => c.response.id === ack.responseUrlId);
      expect(answer.params.blocks, text).toMatch(/./);
    }
    const actions = await until(() => {
      const lines = logLines(h, /^admin action$/);
      return lines.length >= 3 && lines;
    }, 'three "admin action" lines');
    expect(actions.map((l) => [l.action, l.outcome, l.channelId, l.level])).toEqual([
      ['bind', 'ok', channel, 30],
      ['set', 'ok', channel, 30],
      ['unbind', 'ok', channel, 30],
    ]);
  }, 30_000);

  it('no line repeats a key (Slack adapter and SDK lines used to carry "platform" twice)', () => {
    expect(h.logs.lines.length).toBeGreaterThan(3);
    // The Slack adapter's own lines and the SDK's share the logger that used to bind it twice.
    expect(h.logs.lines.filter((l) => l.includes('"platform":"slack"')).length).toBeGreaterThan(3);
    const repeated = h.logs.lines.map((l) => [duplicateKeys(l), l] as const).filter(([keys]) => keys.length > 0);
    expect(repeated).toEqual([]);
  });
});
