import { describe, expect, it } from 'vitest';
import { createCredentialFingerprints } from '../../src/crypto/credential-fingerprints.js';
import { bullPrefix } from '../../src/redis.js';
import { REDACTED } from '../../src/core/scrub.js';
import type { Json } from '../emulators/discord/index.js';
import { discordKillSuite } from './support/kill-suite.js';

/**
 * Exactly once at the worst moment, on Discord: a worker process is SIGKILLed after Discord
 * stored its post and before the answer reached it (the emulator holds that answer); the worker
 * that takes the job over comes after Discord's nonce window (set short here: the workers were
 * down longer than Discord's few minutes), so only the bridge's own lookup stands between the
 * user and a second post. The agent is asked once, and the user sees one post.
 */
// Ingress only in this process (the gateway); worker processes answer. FAST_TAKEOVER: a dead
// worker's job is taken over within seconds, past the nonce window set here.
const suite = discordKillSuite({ emulator: { nonceWindowMs: 300 }, agent: { reply: (_id, m) => `echo: ${m}` } });
const { guard } = suite;

/**
 * Asks `text` in #general with the answer of the create matching `held` held back, SIGKILLs the
 * worker there, runs `meanwhile` and starts another; resolves once the queue is idle.
 */
async function killMidPost(text: string, held: (body: Json) => boolean, meanwhile: () => Promise<void> = async () => {}) {
  const hs = suite.h;
  const w = hs.discord.world;
  const first = await suite.spawnWorker();
  const before = hs.discord.heldCreates.length;
  hs.discord.holdNextMessageCreate(held);
  const question = hs.discord.sendMessage({ author: w.users.alice, channel: w.channels.general, content: `<@${w.bot.id}> ${text}` });
  await hs.discord.waitFor(() => hs.discord.heldCreates.length > before, 'the held post', 30_000);
  // Discord has the post; the worker never hears so.
  await first.kill9();
  await meanwhile();
  await suite.spawnWorker();
  await suite.endRound({ timeoutMs: 30_000, also: () => hs.agent.chatCalls().some((x) => x.message.includes(text)) });
  const bot = hs.discord.botMessages(w.channels.general.id).filter((m) => BigInt(m.id as string) > BigInt(question.id as string));
  return { bot, calls: hs.agent.chatCalls().filter((c) => c.message.includes(text)) };
}

describe('Discord: a worker SIGKILLed right after Discord stored its post, resumed past the nonce window', () => {
  it('a give-up notice is posted once, and the agent was asked once', async () => {
    suite.h.agent.failNext(1, { status: 422, body: { error: 'instance refused the message' } }, { endpoint: 'chat' });
    const { bot, calls } = await killMidPost('refused question', (b) => /\(ref [A-Z2-9]{6}\)/.test(String(b.content ?? '')));
    expect(bot).toHaveLength(1);
    expect(String(bot[0]!.content)).toMatch(/\(ref [A-Z2-9]{6}\)$/);
    expect(calls).toHaveLength(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);

  it('a reply redacted differently after the restart (a credential added meanwhile) is posted once', async () => {
    const value = `cred-between-${Date.now()}-abcdef`;
    const addCredential = async () => {
      // Someone adds the value as a credential while the worker is down: the next one redacts it.
      const hs = suite.h;
      const fingerprints = createCredentialFingerprints({ redis: hs.bridge.redis, prefix: `${bullPrefix(hs.bridge.config)}:chat`, secret: hs.agent.apiKey, logger: { warn: () => {} } });
      await fingerprints.ready();
      await fingerprints.add(value);
      await fingerprints.close();
    };
    const { bot, calls } = await killMidPost(`remember ${value} please`, (b) => String(b.content ?? '').includes('remember'), addCredential);
    // The one post is the first worker's, made before the value was a credential.
    expect(bot.map((m) => m.content)).toEqual([expect.stringContaining(`remember ${value} please`)]);
    expect(bot.some((m) => String(m.content).includes(REDACTED))).toBe(false);
    expect(calls).toHaveLength(1);
    expect(guard.errors).toEqual([]);
  }, 90_000);
});
