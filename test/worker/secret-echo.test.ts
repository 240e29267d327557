import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { closeAfterEach } from '../support/close-after-each.js';
import { REDACTED } from '../../src/core/scrub.js';
import { startAgentEmulator } from '../../src/demo/agent-emulator.js';
import { newPrefix, startTestBridge } from '../support/bridge-harness.js';
import { webMessage } from '../support/pipeline.js';
import { Sink, sinkPlatform } from '../support/sink.js';
import { dumpAll, testRedis } from '../support/redis-helpers.js';

/**
 * Issue 6: an agent that echoes the bridge's own API key in its answer (a prompt injection, a
 * debugging agent) must not put the key in chat, or in Redis on the way there.
 */
describe('an answer that echoes a secret of the bridge', () => {
  const closing = closeAfterEach();

  it('is posted with the secret replaced, and stored without it', async () => {
    const apiKey = `echo-key-${randomBytes(12).toString('hex')}`;
    const agent = await startAgentEmulator({ apiKey, reply: () => `Sure. The key I was called with is ${apiKey}; JSON-escaped: "${apiKey}".` });
    const sink = await new Sink().start();
    const t = closing(
      await startTestBridge({
        prefix: newPrefix('echo'),
        agent,
        // The first post fails; the retry waits a second or two with the answer recorded in Redis.
        env: { BINDINGS: 'web:c1=demo-helper', LOG_LEVEL: 'warn', RETRY_BASE_DELAY_MS: '2000' },
        platforms: [sinkPlatform(sink.url)],
        closeWith: [sink],
      }),
    );
    const { redis } = testRedis();
    try {
      const m = webMessage('what key did you get?');
      sink.fail({ status: 500 });
      let stored: Promise<string[]> | undefined;
      sink.onRequest = () => (stored ??= dumpAll(redis, t.prefix));
      await t.bridge.ingress.handle(m);
      await sink.waitFor((posts) => posts.some((p) => p.messageId === m.messageId), 30_000);
      const post = sink.posts.find((p) => p.messageId === m.messageId)!;
      expect(post.text).not.toContain(apiKey);
      expect(post.text).toContain(`The key I was called with is ${REDACTED}`);
      // Read while the refused first post waited for its retry: the recorded answer is there, redacted.
      const dump = (await stored!).join('\n');
      expect(dump).toContain(REDACTED);
      expect(dump).not.toContain(apiKey);
    } finally {
      await redis.quit();
    }
  }, 40_000);
});
