import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordBridge, until, type DiscordHarness } from './harness.js';
import { ASK_ANSWERS } from '../../adapters/discord/commands/ask-agent.js';

/**
 * Discord sends a shard's events to every session of that shard: while two processes run the
 * same shard (a deploy that starts the new process before stopping the old), both receive each
 * interaction, and the one that answers second is refused with 40060 ("already acknowledged").
 * That is no failure: nothing is asked twice, and the operator is not shown an error.
 */
let h: DiscordHarness;
beforeAll(async () => {
  h = await startDiscordBridge({ agent: { reply: (_id, message) => `echo: ${message}` }, session: true });
});
afterAll(async () => h?.close());

const w = () => h.discord.world;
const levelOf = (line: string) => (JSON.parse(line) as { level?: number }).level ?? 0;
const settledSecond = () => h.logs.matching(/already answered by another session|discord interaction failed/).length > 0;

describe('an interaction delivered to a second session of its shard', () => {
  it('"Ask the agent": the agent is asked once, the message answered once, and no error is logged', async () => {
    const target = h.discord.sendMessage({ author: w().users.bob, channel: w().channels.general, content: 'what does the release checklist say?' });
    const ask = h.discord.runMessageCommand({ user: w().users.alice, channel: w().channels.general, target });
    const answer = await h.discord.waitFor(() => ask.original?.content as string | undefined, 'the ask answer');
    expect(answer).toBe(ASK_ANSWERS.queued('demo-helper'));
    await h.discord.waitFor(() => h.discord.repliesTo(target.id)[0], 'the answer to the asked message');
    const errorsBefore = h.logs.lines.filter((l) => levelOf(l) >= 50).length;

    h.discord.redeliverInteraction(ask);
    await until(settledSecond, 'the second delivery handled', 10_000);
    await new Promise((r) => setTimeout(r, 500));

    expect(h.agent.chatCalls().length).toBe(1);
    expect(h.discord.repliesTo(target.id)).toHaveLength(1);
    expect(ask.responses.filter((r) => r.kind === 'callback')).toHaveLength(1);
    expect(ask.followups).toEqual([]);
    expect(h.logs.lines.filter((l) => levelOf(l) >= 50).slice(errorsBefore)).toEqual([]);
    expect(h.logs.matching(/could not tell the user/)).toEqual([]);
    expect(h.logs.matching(/already answered by another session of its shard/)).toHaveLength(1);
  });

  it('a credential form submitted: the value is sent to the agent service once, and no error is logged', async () => {
    const open = h.discord.runCommand({ user: w().users.alice, channel: w().channels.bound, subcommand: 'credential', options: { instance: 'demo-helper' } });
    const modal = await h.discord.waitFor(() => open.responses.find((r) => r.type === 9), 'the form');
    const submit = h.discord.submitModal({ user: w().users.alice, channel: w().channels.bound, customId: modal.data.custom_id, fields: { key: 'API_TOKEN', value: 'second-session-value-3f9a' } });
    await h.discord.waitFor(() => submit.original?.content, 'the confirmation');
    const credentialCalls = () => h.agent.calls.filter((c) => JSON.stringify(c).includes('second-session-value-3f9a')).length;
    const sent = credentialCalls();
    expect(sent).toBeGreaterThan(0);
    const errorsBefore = h.logs.lines.filter((l) => levelOf(l) >= 50).length;
    const answeredBefore = h.logs.matching(/already answered by another session/).length;

    h.discord.redeliverInteraction(submit);
    await until(() => h.logs.matching(/already answered by another session|credential submit failed/).length > answeredBefore, 'the second delivery handled', 10_000);
    await new Promise((r) => setTimeout(r, 300));

    expect(credentialCalls()).toBe(sent);
    expect(submit.followups).toEqual([]);
    expect(h.logs.lines.filter((l) => levelOf(l) >= 50).slice(errorsBefore)).toEqual([]);
  });
});
