import { afterEach, describe, expect, it } from 'vitest';
import { startAgentEmulator, type AgentEmulator } from '../../src/demo/agent-emulator.js';
import { discordPlatform } from '../../adapters/discord/index.js';
import { startDiscordEmulator, type DiscordEmulator, type Json } from '../emulators/discord/index.js';
import { newPrefix, startTestBridge, type TestBridge } from '../support/bridge-harness.js';
import { HeldCalls } from '../support/held-calls.js';
import { discordEnv } from '../support/platform-env.js';
import { until } from '../support/until.js';

/**
 * A question edited or deleted while no Discord ingress process held its shard (a deploy, a
 * crash). The next process RESUMEs the session left behind and Discord replays every event of
 * the gap, MESSAGE_UPDATE and MESSAGE_DELETE among them. Before, the catch-up handed over only
 * MESSAGE_CREATE: the agent got the question as first sent (the password its author took out),
 * or one its author deleted or no longer addressed to the bot, and the call was billed.
 * A worker runs apart from the ingress processes (ROLE), so a call can be held across the stop.
 */
interface Rig {
  discord: DiscordEmulator;
  agent: AgentEmulator;
  held: HeldCalls;
  worker: TestBridge;
  first: TestBridge & { stop(): Promise<void> };
  /** Starts the next ingress process and waits until it caught up on the first one's session. */
  takeOver(): Promise<TestBridge>;
  /** Starts the next ingress process (its catch-up may still be under way). */
  startNext(): Promise<TestBridge>;
  /** Agent calls made so far whose message includes `text`. */
  called(text: string): number;
  /** Bob writes to the bot in `general` (mention-only). */
  ask(content: string): Json;
}

const running: TestBridge[] = [];
const holds: HeldCalls[] = [];
afterEach(async () => {
  // A test that failed leaves no agent call held (the worker's stop would wait for it).
  for (const held of holds.splice(0)) held.release();
  // Ingress processes first (their agent and emulator are the worker's, closed with it).
  for (const b of running.splice(0).reverse()) await b.close();
});

async function startRig(): Promise<Rig> {
  const prefix = newPrefix('dcatchedit');
  const held = new HeldCalls();
  holds.push(held);
  const agent = await startAgentEmulator({ reply: held.reply });
  const discord = await startDiscordEmulator();
  const env = discordEnv(discord, agent);
  const keep = { ...agent, close: async () => {} } as AgentEmulator;
  const worker = await startTestBridge({ prefix, agent, env: { ...env, ROLE: 'worker' }, platforms: [discordPlatform], closeWith: [discord] });
  running.push(worker);
  const ingress = async () => {
    const b = await startTestBridge({ prefix, agent: keep, env: { ...env, ROLE: 'ingress' }, platforms: [discordPlatform] });
    // Stopped once; its close must not delete the run's keys while the worker still runs.
    let stopping: Promise<void> | undefined;
    const stop = () => (stopping ??= b.bridge.stop());
    const process = { ...b, close: stop, stop };
    running.push(process);
    return process;
  };
  const first = await ingress();
  await until(() => discord.gatewayConnected, 'the first process connected');
  const general = discord.world.channels.general;
  return {
    discord,
    agent,
    held,
    worker,
    first,
    startNext: ingress,
    async takeOver() {
      const next = await ingress();
      await until(() => next.logs.matching(/caught up on the session its previous process left/).length === 1, 'caught up');
      return next;
    },
    called: (text) => agent.chatCalls().filter((c) => c.message.includes(text)).length,
    ask: (content) => discord.sendMessage({ author: discord.world.users.bob, channel: general, content: `<@${discord.world.bot.id}> ${content}` }),
  };
}

/** A moderator's bot bulk-deletes `messages` of `channel`, as Discord takes it (REST, 2 to 100 IDs). */
async function bulkDelete(rig: Rig, messages: Json[]): Promise<Response> {
  const channel = rig.discord.world.channels.general;
  return fetch(`${rig.discord.apiUrl}/v10/channels/${channel.id}/messages/bulk-delete`, {
    method: 'POST',
    headers: { authorization: `Bot ${rig.discord.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: messages.map((m) => String(m.id)) }),
  });
}

/** Asks one more question and waits for its answer: what was queued before it in the channel is done. */
async function settled(rig: Rig, tag: string): Promise<void> {
  const after = rig.ask(`after the gap ${tag}`);
  await rig.discord.waitFor(() => rig.discord.repliesTo(String(after.id))[0], 'the question after the gap answered', 30_000);
}

/** Holds the agent on a first question, queues `contents` behind it in the first process, and stops that process. */
async function queueBehindHeldAndStop(
  rig: Rig,
  tag: string,
  contents: [string, ...string[]],
  send: (content: string) => Json = rig.ask,
): Promise<{ slow: Json; queued: [Json, ...Json[]] }> {
  rig.held.hold();
  const slow = send(`HOLD slow ${tag}`);
  await until(() => rig.called(`slow ${tag}`) === 1, 'the slow call under way');
  const queued = contents.map((content) => send(content)) as [Json, ...Json[]];
  const ids = queued.map((m) => m.id);
  const queuedCount = () => rig.first.logs.matching(/discord message handled/).filter((l) => ids.includes(l.messageId) && l.status === 'queued').length;
  await until(() => queuedCount() === ids.length, 'queued');
  await rig.first.stop();
  return { slow, queued };
}

/** Lets the held call finish and waits for its answer. */
async function releaseHeld(rig: Rig, slow: Json): Promise<void> {
  rig.held.release();
  await rig.discord.waitFor(() => rig.discord.repliesTo(String(slow.id))[0], 'the slow one answered', 30_000);
}

describe('Discord: a question edited or deleted while no ingress process held the shard', () => {
  it('sent then edited in the gap (a password taken out): the agent gets the edited text only', async () => {
    const rig = await startRig();
    await rig.first.stop();
    const secret = rig.ask('log in with password hunter2 please');
    rig.discord.editMessage(secret, `<@${rig.discord.world.bot.id}> log in with password [removed] please`);
    const second = await rig.takeOver();
    await rig.discord.waitFor(() => rig.discord.repliesTo(String(secret.id))[0], 'the edited question answered', 30_000);
    await settled(rig, 'edit');
    expect(rig.called('hunter2')).toBe(0);
    expect(rig.called('[removed]')).toBe(1);
    expect(rig.discord.repliesTo(String(secret.id)).map((m) => m.content)).toEqual(['echo: log in with password [removed] please']);
    // The emulator replayed the edit after its create, as Discord does.
    const dispatched = rig.discord.gatewayStats.dispatched.filter((d) => d.t === 'MESSAGE_CREATE' || d.t === 'MESSAGE_UPDATE').map((d) => d.t);
    expect(dispatched.slice(0, 2)).toEqual(['MESSAGE_CREATE', 'MESSAGE_UPDATE']);
    expect(second.logs.text).not.toContain('hunter2');
  }, 60_000);

  it('sent then its mention edited out in the gap: the agent is not asked', async () => {
    const rig = await startRig();
    await rig.first.stop();
    const regretted = rig.ask('and my token is abc-oops');
    rig.discord.editMessage(regretted, 'never mind, and my token is gone');
    await rig.takeOver();
    await settled(rig, 'mention');
    expect(rig.called('abc-oops')).toBe(0);
    expect(rig.called('token is gone')).toBe(0);
    expect(rig.discord.repliesTo(String(regretted.id))).toEqual([]);
  }, 60_000);

  it('sent then deleted in the gap: the agent is not asked', async () => {
    const rig = await startRig();
    await rig.first.stop();
    const deleted = rig.ask('a question deleted at once');
    rig.discord.deleteMessage(deleted);
    await rig.takeOver();
    await settled(rig, 'delete');
    expect(rig.called('deleted at once')).toBe(0);
    expect(rig.discord.repliesTo(String(deleted.id))).toEqual([]);
  }, 60_000);

  it('queued before the stop (behind a held call), edited in the gap: the edited text reaches the agent', async () => {
    const rig = await startRig();
    const { slow, queued: [secret] } = await queueBehindHeldAndStop(rig, 'one', ['my pin is 4242, is it safe?']);
    rig.discord.editMessage(secret, `<@${rig.discord.world.bot.id}> my pin is [removed], is it safe?`);
    const second = await rig.takeOver();
    await until(() => second.logs.matching(/was edited: the agent will be asked the edited text/).some((l) => l.messageId === secret.id), 'edit applied');
    await releaseHeld(rig, slow);
    await rig.discord.waitFor(() => rig.discord.repliesTo(String(secret.id))[0], 'the edited one answered', 30_000);
    expect(rig.called('4242')).toBe(0);
    expect(rig.discord.repliesTo(String(secret.id)).map((m) => m.content)).toEqual(['echo: my pin is [removed], is it safe?']);
  }, 60_000);

  it('queued before the stop, deleted in the gap: withdrawn, the agent is not asked', async () => {
    const rig = await startRig();
    const { slow, queued: [gone] } = await queueBehindHeldAndStop(rig, 'two', ['a question deleted while waiting']);
    rig.discord.deleteMessage(gone);
    const second = await rig.takeOver();
    await until(() => second.logs.matching(/deleted before it was answered/).some((l) => l.messageId === gone.id), 'withdrawn');
    await releaseHeld(rig, slow);
    await settled(rig, 'queued delete');
    expect(rig.called('deleted while waiting')).toBe(0);
  }, 60_000);

  it('two queued before the stop, bulk-deleted by a moderator in the gap: neither reaches the agent', async () => {
    const rig = await startRig();
    const { slow, queued: spam } = await queueBehindHeldAndStop(rig, 'three', ['bulk-deleted question one', 'bulk-deleted question two']);
    const ids = spam.map((m) => m.id);
    expect((await bulkDelete(rig, spam)).status).toBe(204);
    const second = await rig.takeOver();
    await until(() => second.logs.matching(/deleted before it was answered/).filter((l) => ids.includes(l.messageId)).length === 2, 'both withdrawn');
    await releaseHeld(rig, slow);
    await settled(rig, 'bulk delete');
    expect(rig.called('bulk-deleted question')).toBe(0);
    for (const m of spam) expect(rig.discord.repliesTo(String(m.id))).toEqual([]);
    // Replayed as Discord sends it: one MESSAGE_DELETE_BULK with both IDs.
    const bulk = rig.discord.gatewayStats.dispatched.filter((d) => d.t === 'MESSAGE_DELETE_BULK');
    expect(bulk).toHaveLength(1);
  }, 60_000);

  it('a DM question queued before the stop, edited in the gap (its channel unknown to the new process): the edited text reaches the agent', async () => {
    const rig = await startRig();
    const w = rig.discord.world;
    const dm = (content: string) => rig.discord.sendMessage({ author: w.users.alice, channel: w.channels.dmAlice, content });
    const { slow, queued: [secret] } = await queueBehindHeldAndStop(rig, 'dm', ['my pin is 4242, is it safe?'], dm);
    rig.discord.editMessage(secret, 'my pin is [removed], is it safe?');
    const second = await rig.takeOver();
    // discord.js drops an update in a channel it does not know: the raw path fetches it (uncached-channel-edit.ts).
    await until(() => second.logs.matching(/was edited: the agent will be asked the edited text/).some((l) => l.messageId === secret.id), 'edit applied');
    await releaseHeld(rig, slow);
    await rig.discord.waitFor(() => rig.discord.repliesTo(String(secret.id))[0], 'the edited one answered', 30_000);
    expect(rig.called('4242')).toBe(0);
    expect(rig.discord.repliesTo(String(secret.id)).map((m) => m.content)).toEqual(['echo: my pin is [removed], is it safe?']);
  }, 60_000);

  it('edited in the gap, then again once the new process runs, and the replay comes late: the newer edit stands', async () => {
    const rig = await startRig();
    const { slow, queued: [secret] } = await queueBehindHeldAndStop(rig, 'four', ['my pin is 4242, is it save?']);
    const bot = `<@${rig.discord.world.bot.id}>`;
    rig.discord.editMessage(secret, `${bot} my pin is 4242, is it safe?`);
    // The catch-up's RESUME is taken, its replay (the edit above) reaches the bridge late.
    const resumes = rig.discord.gatewayStats.resumes;
    rig.discord.slowNextResume();
    const second = await rig.startNext();
    await until(() => rig.discord.gatewayStats.resumes > resumes, 'the catch-up resumed');
    // Live on the new session (not in the replay): applied before the older edit the replay holds.
    rig.discord.editMessage(secret, `${bot} my pin is [removed], is it safe?`);
    await until(() => second.logs.matching(/was edited: the agent will be asked the edited text/).some((l) => l.messageId === secret.id), 'the newer edit applied');
    rig.discord.deliverSlowResumes();
    await until(() => second.logs.matching(/caught up on the session its previous process left/).length === 1, 'caught up');
    await releaseHeld(rig, slow);
    await rig.discord.waitFor(() => rig.discord.repliesTo(String(secret.id))[0], 'the edited one answered', 30_000);
    // Before: the replayed edit, handled last, was applied: the pin its author removed came back.
    expect(rig.called('4242')).toBe(0);
    expect(rig.discord.repliesTo(String(secret.id)).map((m) => m.content)).toEqual(['echo: my pin is [removed], is it safe?']);
    expect(second.logs.matching(/arrived after a newer one/).filter((l) => l.messageId === secret.id)).toHaveLength(1);
  }, 60_000);

  /**
   * Sent in the gap (only the catch-up's replay brings it), then changed once the catch-up has
   * RESUMEd: the change comes live on the new session, and its replay reaches the bridge late (the
   * emulator slows the catch-up's link), so the change is handled before the question is stored.
   * Before, it found nothing stored and was dropped: the question was answered as first sent.
   */
  async function changedBeforeReplayed(rig: Rig, content: string, change: (m: Json) => void): Promise<{ m: Json; second: TestBridge }> {
    await rig.first.stop();
    const m = rig.ask(content);
    const resumes = rig.discord.gatewayStats.resumes;
    rig.discord.slowNextResume();
    const second = await rig.startNext();
    await until(() => rig.discord.gatewayStats.resumes > resumes, 'the catch-up resumed');
    change(m);
    await until(() => second.logs.matching(/before it was stored: the agent will/).some((l) => l.messageId === m.id), 'the change kept');
    rig.discord.deliverSlowResumes();
    await until(() => second.logs.matching(/caught up on the session its previous process left/).length === 1, 'caught up');
    return { m, second };
  }

  it('sent in the gap, edited live before its replay is stored: the agent gets the edited text only', async () => {
    const rig = await startRig();
    const bot = `<@${rig.discord.world.bot.id}>`;
    const { m, second } = await changedBeforeReplayed(rig, 'my password is hunter7, is it safe?', (q) => rig.discord.editMessage(q, `${bot} my password is [removed], is it safe?`));
    await rig.discord.waitFor(() => rig.discord.repliesTo(String(m.id))[0], 'the edited one answered', 30_000);
    expect(rig.called('hunter7')).toBe(0);
    expect(rig.discord.repliesTo(String(m.id)).map((r) => r.content)).toEqual(['echo: my password is [removed], is it safe?']);
    expect(second.logs.text).not.toContain('hunter7');
  }, 60_000);

  it('sent in the gap, deleted live before its replay is stored: the agent is not asked', async () => {
    const rig = await startRig();
    const { m } = await changedBeforeReplayed(rig, 'a question deleted before its replay', (q) => rig.discord.deleteMessage(q));
    await settled(rig, 'early delete');
    expect(rig.called('deleted before its replay')).toBe(0);
    expect(rig.discord.repliesTo(String(m.id))).toEqual([]);
  }, 60_000);
});
