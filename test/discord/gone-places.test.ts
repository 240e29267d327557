import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordReplyPort } from '../../adapters/discord/reply-port.js';
import { createLogger } from '../../src/logger.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import { loadTestConfig } from '../support/config.js';
import { cleanup, testRedis } from '../support/redis-helpers.js';
import { startDiscordEmulator, type DiscordEmulator } from '../emulators/discord/index.js';

/**
 * A worker that meets `Unknown Channel` (10003) tells the others through Redis: a second worker
 * process (its own port, no gateway) makes no billed call for what is queued in that channel.
 */
let emu: DiscordEmulator;
const { redis, prefix } = testRedis();
beforeAll(async () => {
  emu = await startDiscordEmulator();
});
afterAll(async () => {
  await emu?.close();
  await cleanup(redis, prefix);
});

function workerPort(): ReplyPort {
  const config = loadTestConfig({
    AGENT_API_BASE_URL: 'http://127.0.0.1:9/api/v1',
    AGENT_API_KEY: 'unused-key',
    DISCORD_TOKEN: emu.token,
    DISCORD_API_URL: emu.apiUrl,
    QUEUE_PREFIX: prefix,
  });
  return createDiscordReplyPort({ config, logger: createLogger({ level: 'silent' }), redis });
}

describe('a channel deleted, learned from a refused post', () => {
  it('stops every worker from calling the agent for that channel, and no other', async () => {
    const channel = emu.world.channels.bound;
    const question = emu.sendMessage({ author: emu.world.users.alice, channel, content: 'question' });
    const later = emu.sendMessage({ author: emu.world.users.bob, channel, content: 'queued behind it' });
    const [first, second] = [workerPort(), workerPort()];
    // Deleted with no gateway to say so (the ingress was down): the post is what tells.
    emu.deleteChannel(channel);
    await expect(first.postChunk({ channelId: channel.id, messageId: question.id }, 'the answer', 0)).rejects.toMatchObject({ kind: 'refused', code: '10003' });
    await expect
      .poll(() => second.ready!({ channelId: channel.id, messageId: later.id }).then(() => 'ready', (e: Error) => e.message))
      .toBe(`Discord channel ${channel.id} was deleted: its answer could not be posted, so the agent was not asked`);
    await expect(second.ready!({ channelId: emu.world.channels.general.id, messageId: later.id })).resolves.toBeUndefined();
  });
});
