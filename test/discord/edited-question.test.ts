import { afterEach, describe, expect, it } from 'vitest';
import { mention, startDiscordBridge, until, type DiscordHarness } from './harness.js';
import { HeldCalls } from '../support/held-calls.js';
import { openForAll } from '../support/open-for-all.js';
import { heldQuestions } from './held-questions.js';

/**
 * Someone edits a question while it waits in line behind a slow one (a password pasted by
 * mistake, taken out again): Discord sends MESSAGE_UPDATE. Until its agent call starts, the
 * agent gets the edited text, or nothing when the edit no longer asks the bot; once the call
 * started, the edit changes nothing and nothing is asked twice.
 */

/** Agent calls whose message holds `HOLD` wait until released (one gate per test). */
const held = new HeldCalls();
let h: DiscordHarness;
openForAll(async () => (h = await startDiscordBridge({ extraChannels: 2, held })));
const { called, say, heldQuestion, queued, release, pushOutOfCache } = heldQuestions(() => h, held);
const w = () => h.discord.world;

describe('Discord: a question edited before it is answered', () => {
  it('the secret edited out of a waiting question never reaches the agent, nor the log', async () => {
    const channel = h.extra[0]!;
    const first = await heldQuestion(channel, 'first in line');
    const secret = say(channel, 'log in with password hunter2 please');
    await queued(secret);
    h.discord.editMessage(secret, 'log in with password [removed] please');
    await until(() => h.logs.matching(/was edited: the agent will be asked the edited text/).some((l) => l.messageId === secret.id), 'edit applied');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    await h.discord.waitFor(() => h.discord.repliesTo(secret.id)[0], 'edited one answered');
    // Before: the agent was asked (and billed for) the original, secret included.
    expect(called('hunter2')).toBe(0);
    expect(called('[removed]')).toBe(1);
    expect(h.discord.repliesTo(secret.id).map((m) => m.content)).toEqual(['echo: log in with password [removed] please']);
    expect(h.logs.text).not.toContain('hunter2');
  });

  it('two edits handed over newest first (a hand-over\'s two connections): the newest text reaches the agent', async () => {
    const channel = h.extra[0]!;
    const first = await heldQuestion(channel, 'first of two edits');
    const secret = say(channel, 'log in with password hunter5 please');
    await queued(secret);
    // The older edit comes after the newer one (the emulator holds it back).
    h.discord.holdNextEdit(secret);
    h.discord.editMessage(secret, 'log in with password hunter5 please, thanks');
    h.discord.editMessage(secret, 'log in with password [removed] please');
    const handled = () => h.logs.matching(/was edited: the agent will be asked|arrived after a newer one/).filter((l) => l.messageId === secret.id);
    await until(() => handled().length === 1, 'the newer edit applied');
    expect(h.discord.releaseHeldEdits()).toBe(1);
    await until(() => handled().length === 2, 'the older edit handled');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    await h.discord.waitFor(() => h.discord.repliesTo(secret.id)[0], 'edited one answered');
    // Before: the older edit, handled last, was applied, and the password came back.
    expect(called('hunter5')).toBe(0);
    expect(h.discord.repliesTo(secret.id).map((m) => m.content)).toEqual(['echo: log in with password [removed] please']);
    expect(h.logs.matching(/arrived after a newer one/).filter((l) => l.messageId === secret.id)).toHaveLength(1);
  });

  it('a question whose mention is edited out while it waits is not asked', async () => {
    const general = w().channels.general;
    const first = await heldQuestion(general, 'slow one', `${mention(h.discord)} `);
    const regretted = say(general, `${mention(h.discord)} and my token is abc-oops`);
    await queued(regretted);
    h.discord.editMessage(regretted, 'never mind, and my token is gone');
    await until(() => h.logs.matching(/no longer addressed to the bot/).some((l) => l.messageId === regretted.id), 'withdrawal logged');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    const next = say(general, `${mention(h.discord)} next one`);
    await h.discord.waitFor(() => h.discord.repliesTo(next.id)[0], 'next one answered');
    expect(called('abc-oops')).toBe(0);
    expect(called('token is gone')).toBe(0);
    expect(h.discord.repliesTo(regretted.id)).toEqual([]);
  });

  it('an edit after the call started changes nothing: one call, one answer', async () => {
    const channel = h.extra[1]!;
    const running = await heldQuestion(channel, 'running question');
    h.discord.editMessage(running, 'HOLD running question, edited');
    await until(() => h.logs.matching(/edited after its agent call started/).some((l) => l.messageId === running.id), 'edit refused');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(running.id)[0], 'answered');
    const next = say(channel, 'after it');
    await h.discord.waitFor(() => h.discord.repliesTo(next.id)[0], 'next one answered');
    expect(called('running question')).toBe(1);
    expect(h.discord.repliesTo(running.id).map((m) => m.content)).toEqual(['echo: HOLD running question']);
  });

  it('a link unfurled under a waiting question (MESSAGE_UPDATE with its embeds) is not an edit', async () => {
    const channel = h.extra[1]!;
    const first = await heldQuestion(channel, 'before the link');
    const linked = say(channel, 'see https://example.com/page');
    await queued(linked);
    h.discord.unfurl(linked, [{ type: 'link', url: 'https://example.com/page', title: 'A page' }]);
    const after = say(channel, 'after the link');
    await queued(after);
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    await h.discord.waitFor(() => h.discord.repliesTo(after.id)[0], 'after answered');
    expect(h.discord.repliesTo(linked.id).map((m) => m.content)).toEqual(['echo: see https://example.com/page']);
    expect(h.logs.matching(/edited/).filter((l) => l.messageId === linked.id)).toEqual([]);
  });
});

describe('Discord: a question edited once discord.js no longer caches it (a busy channel)', () => {
  // A test that fails leaves no call held for the next.
  afterEach(release);

  it('the edited text reaches the agent, not the one first sent', async () => {
    const general = w().channels.general;
    const first = await heldQuestion(general, 'busy first', `${mention(h.discord)} `);
    const secret = say(general, `${mention(h.discord)} my password is hunter3, can you check it`);
    await queued(secret);
    await pushOutOfCache(general, secret);
    h.discord.editMessage(secret, `${mention(h.discord)} my password is [removed], can you check it`);
    await until(() => h.logs.matching(/was edited: the agent will be asked the edited text/).some((l) => l.messageId === secret.id), 'edit applied');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    await h.discord.waitFor(() => h.discord.repliesTo(secret.id)[0], 'edited one answered');
    // Before: discord.js emitted no messageUpdate for it, and the agent got the password.
    expect(called('hunter3')).toBe(0);
    expect(h.discord.repliesTo(secret.id).map((m) => m.content)).toEqual(['echo: my password is [removed], can you check it']);
    expect(h.logs.text).not.toContain('hunter3');
  });

  it('a question whose mention is edited out is withdrawn', async () => {
    const general = w().channels.general;
    const first = await heldQuestion(general, 'busy slow one', `${mention(h.discord)} `);
    const regretted = say(general, `${mention(h.discord)} and my key is xyz-oops`);
    await queued(regretted);
    await pushOutOfCache(general, regretted);
    h.discord.editMessage(regretted, 'never mind, and my key is gone');
    await until(() => h.logs.matching(/no longer addressed to the bot/).some((l) => l.messageId === regretted.id), 'withdrawal logged');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    const next = say(general, `${mention(h.discord)} busy next one`);
    await h.discord.waitFor(() => h.discord.repliesTo(next.id)[0], 'next one answered');
    expect(called('xyz-oops')).toBe(0);
    expect(called('key is gone')).toBe(0);
    expect(h.discord.repliesTo(regretted.id)).toEqual([]);
  });

  it('a link unfurled under an uncached waiting question is not an edit', async () => {
    const general = w().channels.general;
    const first = await heldQuestion(general, 'busy before the link', `${mention(h.discord)} `);
    const linked = say(general, `${mention(h.discord)} see https://example.com/busy`);
    await queued(linked);
    await pushOutOfCache(general, linked);
    h.discord.unfurl(linked, [{ type: 'link', url: 'https://example.com/busy', title: 'A page' }]);
    const after = say(general, `${mention(h.discord)} busy after the link`);
    await queued(after);
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    await h.discord.waitFor(() => h.discord.repliesTo(after.id)[0], 'after answered');
    expect(h.discord.repliesTo(linked.id).map((m) => m.content)).toEqual(['echo: see https://example.com/busy']);
    expect(h.logs.matching(/edited/).filter((l) => l.messageId === linked.id)).toEqual([]);
  });

  it('an edited question unfurled later (its update carries the same edited text) is edited once', async () => {
    const general = w().channels.general;
    const first = await heldQuestion(general, 'busy before the edit and link', `${mention(h.discord)} `);
    const m = say(general, `${mention(h.discord)} read https://example.com/a with password hunter4`);
    await queued(m);
    await pushOutOfCache(general, m);
    h.discord.editMessage(m, `${mention(h.discord)} read https://example.com/a`);
    await until(() => h.logs.matching(/was edited: the agent will be asked the edited text/).some((l) => l.messageId === m.id), 'edit applied');
    await pushOutOfCache(general, m);
    h.discord.unfurl(m, [{ type: 'link', url: 'https://example.com/a', title: 'A page' }]);
    const after = say(general, `${mention(h.discord)} busy after the edited link`);
    await queued(after);
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(after.id)[0], 'after answered');
    expect(h.discord.repliesTo(first.id)).toHaveLength(1);
    expect(h.discord.repliesTo(m.id).map((r) => r.content)).toEqual(['echo: read https://example.com/a']);
    expect(called('hunter4')).toBe(0);
    expect(h.logs.matching(/was edited/).filter((l) => l.messageId === m.id)).toHaveLength(1);
  });

  it('a DM question edited after its channel left the cache (idle an hour, or a restart) reaches the agent edited', async () => {
    const dm = w().channels.dmAlice;
    const first = await heldQuestion(dm, 'dm first');
    const secret = say(dm, 'my pin is 4242, is it safe?');
    await queued(secret);
    // What the idle-DM sweeper does (gateway-cache.ts), and what a restarted process starts with.
    h.adapter.client!.channels.cache.delete(dm.id);
    h.discord.editMessage(secret, 'my pin is [removed], is it safe?');
    await until(() => h.logs.matching(/was edited: the agent will be asked the edited text/).some((l) => l.messageId === secret.id), 'edit applied');
    release();
    await h.discord.waitFor(() => h.discord.repliesTo(first.id)[0], 'first answered');
    await h.discord.waitFor(() => h.discord.repliesTo(secret.id)[0], 'edited one answered');
    expect(called('4242')).toBe(0);
    expect(h.discord.repliesTo(secret.id).map((m) => m.content)).toEqual(['echo: my pin is [removed], is it safe?']);
  });
});
