import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestConfig } from '../support/config.js';
import { Redis } from 'ioredis';
import { createSlackReplyPort } from '../../adapters/slack/reply-port.js';

import { createFeedbackStore, decodeFeedbackValue } from '../../src/feedback/index.js';
import { createLogger } from '../../src/logger.js';
import { botMention, chatCalls, logLines, postsIn, say, startSlackBridge, until, W, type SlackHarness } from './harness.js';

/**
 * Issue 14 on Slack, end to end over both transports: the assistant surface, feedback buttons,
 * the "Ask the agent" shortcut and text files, through the real ingress, queue and worker.
 */
describe.each(['http', 'socket'] as const)('Slack native features over %s', (mode) => {
  let h: SlackHarness;
  let redis: Redis;
  beforeAll(async () => {
    h = await startSlackBridge({ mode, env: { MAX_ATTACHMENT_BYTES: '1000' } });
    redis = new Redis('redis://127.0.0.1:6379');
  });
  afterAll(async () => {
    await redis?.quit();
    await h?.close();
  });

  const agentGot = (pattern: RegExp) =>
    until(() => chatCalls(h).find((c) => pattern.test(String((c.json as { message?: string }).message))), `agent call matching ${pattern}`);
  const messageOf = (c: { json?: unknown }) => String((c.json as { message?: string }).message);

  describe('assistant threads', () => {
    it('suggests the default prompts, answers in the thread with status and title, and sends the transcript', async () => {
      const dm = mode === 'http' ? 'D0ASSIST1' : 'D0ASSIST2';
      const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
      await h.to.event(started.event);
      const prompts = await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs);
      expect(prompts.response.ok).toBe(true);
      expect(JSON.parse(prompts.params.prompts!)).toHaveLength(4);

      const first = h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text: 'What is the plan for today?' });
      await h.to.event(first.message);
      const reply = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === dm && /plan for today/.test(c.params.text ?? ''));
      expect(reply.params.thread_ts).toBe(started.threadTs);
      const status = h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === started.threadTs);
      expect(status[0]?.params.status).toBe('is thinking…');
      // The optional loading messages Slack rotates under the status (a JSON array in the form).
      expect(JSON.parse(status[0]!.params.loading_messages!)).toEqual(['Thinking…', 'Asking the agent…']);
      expect(status[0]?.response.ok).toBe(true);
      expect(status[0]!.at).toBeLessThanOrEqual(reply.at);
      // No :eyes: reaction in an assistant thread: the status line replaces it.
      expect(h.slack.callsOf('reactions.add', (c) => c.params.timestamp === first.ts)).toEqual([]);
      const title = await h.slack.waitForCall('assistant.threads.setTitle', (c) => c.params.thread_ts === started.threadTs);
      expect(title.params.title).toBe('What is the plan for today?');

      const second = h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text: 'and tomorrow?' });
      await h.to.event(second.message);
      const call = await agentGot(/and tomorrow\?/);
      // Thread context is on in assistant threads: the user's first message and the agent's reply.
      expect(messageOf(call)).toContain('Earlier messages in this thread:');
      expect(messageOf(call)).toContain('Uma User: What is the plan for today?');
      expect(messageOf(call)).toMatch(/agent \(bot\): \[Demo Helper\]/);
      await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === dm && /and tomorrow/.test(c.params.text ?? ''));
      expect(h.slack.callsOf('assistant.threads.setTitle', (c) => c.params.thread_ts === started.threadTs)).toHaveLength(1);
    });

    it("answers with the context channel's instance after a context change, and uses that binding's prompts", async () => {
      const dm = mode === 'http' ? 'D0ASSIST3' : 'D0ASSIST4';
      const poetChannel = mode === 'http' ? 'C0POETHTT' : 'C0POETSOC';
      const bound = await h.to.command({ text: 'bind demo-poet', user: W.admin, channel: poetChannel });
      await h.slack.waitForCall('response_url', (c) => c.response.id === bound.responseUrlId);
      await redis.hset(`${h.prefix}:chat:prompts`, `slack:${poetChannel}`, JSON.stringify(['Write a haiku', 'Rhyme this']));

      const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
      await h.to.event(started.event);
      await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs);
      await h.to.event(h.slack.assistantContextChanged({ user: W.user, dm, threadTs: started.threadTs, contextChannel: poetChannel }));
      // Slack has its ack before the listener runs: wait until the change is remembered.
      let saved: string | null = null;
      await until(() => {
        void redis.hget(`${h.prefix}:chat:slack:assistant:${dm}:${started.threadTs}`, 'channel').then((v) => (saved = v));
        return saved === poetChannel;
      }, 'context channel remembered');

      const m = h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text: 'a poem please' });
      await h.to.event(m.message);
      await agentGot(/a poem please/);
      const reply = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.channel === dm && c.params.thread_ts === started.threadTs);
      expect(reply.params.text).toContain('Demo Poet');

      const again = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: poetChannel });
      await h.to.event(again.event);
      const prompts = await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === again.threadTs);
      expect(JSON.parse(prompts.params.prompts!)).toEqual([
        { title: 'Write a haiku', message: 'Write a haiku' },
        { title: 'Rhyme this', message: 'Rhyme this' },
      ]);
    });

    it('clears the status line when the agent call fails', async () => {
      const dm = mode === 'http' ? 'D0ASSIST5' : 'D0ASSIST6';
      const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: W.general });
      await h.to.event(started.event);
      // The thread is remembered once its prompts are set; a message before that is a plain DM.
      await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs);
      h.agent.failNext(1, { status: 400, body: { error: 'bad request' } }, { endpoint: 'chat' });
      await h.to.event(h.slack.assistantMessage({ user: W.user, dm, threadTs: started.threadTs, text: 'this one fails' }).message);
      const cleared = await h.slack.waitForCall('assistant.threads.setStatus', (c) => c.params.thread_ts === started.threadTs && c.params.status === '');
      expect(cleared.response.ok).toBe(true);
      // Clearing sends no loading messages; setting it before the call did.
      expect(cleared.params.loading_messages).toBeUndefined();
      const set = h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === started.threadTs && c.params.status !== '');
      expect(set.map((c) => JSON.parse(c.params.loading_messages!))).toEqual([['Thinking…', 'Asking the agent…']]);
    });

    it('clears the status line when the work ends with nothing posted (errors set to silent), and leaves it to Slack after a post', async () => {
      const config = loadTestConfig({ SLACK_BOT_TOKEN: h.slack.identity.botToken, SLACK_SIGNING_SECRET: 'x', SLACK_API_URL: h.slack.apiUrl, AGENT_API_BASE_URL: h.agent.baseUrl, AGENT_API_KEY: 'k' });
      const port = createSlackReplyPort({ config, logger: createLogger({ level: 'silent' }), redis });
      const dm = mode === 'http' ? 'D0ASSIST7' : 'D0ASSIST8';
      const quiet = { channelId: dm, threadId: '1700000000.000100', messageId: '1700000000.000200', assistantThread: true };
      const answered = { ...quiet, threadId: '1700000000.000300', messageId: '1700000000.000400' };
      const statuses = (threadTs: string) => h.slack.callsOf('assistant.threads.setStatus', (c) => c.params.thread_ts === threadTs).map((c) => c.params.status);
      await port.startWorking!(quiet);
      await port.stopWorking!(quiet, 'ok');
      expect(statuses(quiet.threadId)).toEqual(['is thinking…', '']);
      await port.startWorking!(answered);
      await port.postChunk(answered, 'the answer', 0);
      await port.stopWorking!(answered, 'ok');
      expect(statuses(answered.threadId)).toEqual(['is thinking…']);
    });
  });

  describe('feedback', () => {
    it('puts feedback_buttons on the last chunk only, records one vote per user per reply, and thanks ephemerally', async () => {
      const config = loadTestConfig({ SLACK_BOT_TOKEN: h.slack.identity.botToken, SLACK_SIGNING_SECRET: 'x', SLACK_API_URL: h.slack.apiUrl, AGENT_API_BASE_URL: h.agent.baseUrl, AGENT_API_KEY: 'k' });
      const port = createSlackReplyPort({ config, logger: createLogger({ level: 'silent' }), redis });
      const root = await say(h, { channel: W.general, text: 'a question without mention' });
      const target = { channelId: W.general, threadId: root.ts, messageId: root.ts };
      const info = { messageId: `${W.general}:${root.ts}`, total: 2, mayExist: false, agentMessageId: `msg_${mode}_1`, instanceId: 'demo-helper' };
      await port.postChunk(target, 'first part', 0, info);
      await port.postChunk(target, 'second part', 1, info);
      const [firstPost, lastPost] = postsIn(h, W.general, root.ts);
      expect(firstPost!.params.blocks).toBeUndefined();
      const blocks = JSON.parse(lastPost!.params.blocks!) as Array<Record<string, any>>;
      expect(blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: 'second part' } });
      const buttons = blocks[1]!.elements[0];
      expect(blocks[1]!.type).toBe('context_actions');
      expect(buttons.type).toBe('feedback_buttons');
      expect(decodeFeedbackValue(buttons.positive_button.value)).toEqual({ rating: 'positive', instanceId: 'demo-helper', agentMessageId: `msg_${mode}_1` });

      const lastTs = lastPost!.response.ts as string;
      const click = (user: string, value: string) =>
        h.to.interaction(h.slack.feedbackClick({ user, channel: W.general, messageTs: lastTs, threadTs: root.ts, actionId: buttons.action_id, value }));
      expect((await click(W.user, buttons.positive_button.value)).acked).toBe(true);
      const thanks = await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === W.user && c.params.thread_ts === root.ts);
      expect(thanks.params.text).toBe('Thanks for the feedback!');
      await click(W.user, buttons.negative_button.value);
      await click(W.admin, buttons.positive_button.value);
      await until(() => h.slack.callsOf('chat.postEphemeral', (c) => c.params.thread_ts === root.ts).length >= 3, 'three thanks');

      const store = createFeedbackStore({ redis, prefix: `${h.prefix}:chat` });
      const row = (await store.summary({ instanceIds: ['demo-helper'] }))[0]!;
      const mine = row.latestNegative.filter((n) => n.agentMessageId === `msg_${mode}_1`);
      expect(mine).toHaveLength(1);
      expect(mine[0]!.link).toBe(`https://emulated.slack.com/archives/${W.general}/p${lastTs.replace('.', '')}`);
      const metrics = await (await fetch(`http://127.0.0.1:${h.bridge.httpPort}/metrics`)).text();
      expect(metrics).toMatch(/agent_bridge_feedback_total\{agent_instance="demo-helper",rating="negative"\} [1-9]/);
    });
  });

  describe('commands', () => {
    it('`set prompts` changes what an assistant thread from that channel suggests; `feedback` shows the votes', async () => {
      const channel = mode === 'http' ? 'C0PRMHTTP' : 'C0PRMSOCK';
      const bound = await h.to.command({ text: 'bind demo-helper', user: W.admin, channel });
      await h.slack.waitForCall('response_url', (c) => c.response.id === bound.responseUrlId);
      const set = await h.to.command({ text: 'set prompts Summarise this channel | What Changed?', user: W.admin, channel });
      const answer = await h.slack.waitForCall('response_url', (c) => c.response.id === set.responseUrlId);
      expect(answer.rawBody).toContain('What Changed?');
      const refused = await h.to.command({ text: 'set prompts x', user: W.user, channel });
      await h.slack.waitForCall('response_url', (c) => c.response.id === refused.responseUrlId);

      const dm = mode === 'http' ? 'D0ASSIST7' : 'D0ASSIST8';
      const started = h.slack.assistantThreadStarted({ user: W.user, dm, contextChannel: channel });
      await h.to.event(started.event);
      const prompts = await h.slack.waitForCall('assistant.threads.setSuggestedPrompts', (c) => c.params.thread_ts === started.threadTs);
      expect(JSON.parse(prompts.params.prompts!).map((p: { title: string }) => p.title)).toEqual(['Summarise this channel', 'What Changed?']);

      await createFeedbackStore({ redis, prefix: `${h.prefix}:chat` }).record({
        instanceId: 'demo-poet',
        agentMessageId: `msg_cmd_${mode}`,
        platform: 'slack',
        workspaceId: 'T0EMU',
        channelId: channel,
        userId: W.user,
        rating: 'negative',
        link: 'https://emulated.slack.com/archives/C1/p1',
      });
      const fb = await h.to.command({ text: 'feedback', user: W.admin, channel });
      const shown = await h.slack.waitForCall('response_url', (c) => c.response.id === fb.responseUrlId);
      expect(shown.rawBody).toContain('demo-poet');
      expect(shown.rawBody).toContain('https://emulated.slack.com/archives/C1/p1');
    });
  });

  describe('"Ask the agent" shortcut', () => {
    it("sends the message's text and author to the channel's instance, answers in its thread, once per user", async () => {
      const m = h.slack.userMessage({ channel: W.general, user: W.user, text: `release notes for ${mode} are ready` });
      const shortcut = () => h.to.interaction(h.slack.messageShortcut({ user: W.admin, channel: W.general, messageTs: m.ts, callbackId: 'ask_agent' }));
      expect((await shortcut()).acked).toBe(true);
      const call = await agentGot(new RegExp(`release notes for ${mode}`));
      expect(messageOf(call)).toBe(`Message from Uma User:\nrelease notes for ${mode} are ready`);
      const reply = await h.slack.waitForCall('chat.postMessage', (c) => c.response.ok === true && c.params.thread_ts === m.ts);
      expect(reply.params.text).toContain('Demo Helper');
      await shortcut();
      await until(() => logLines(h, /already asked/).some((l) => l.messageId === `${W.general}:${m.ts}:ask:${W.admin}`), 'second click recognised');
      expect(chatCalls(h).filter((c) => new RegExp(`release notes for ${mode}`).test(messageOf(c)))).toHaveLength(1);
    });

    it("explains ephemerally in an unbound channel, also one the bot isn't a member of", async () => {
      // Slack refuses chat.postEphemeral there (not_in_channel); the shortcut's response_url still reaches the user.
      const outside = mode === 'http' ? 'C0OUTSHTT' : 'C0OUTSSOC';
      h.slack.addChannel({ id: outside, member: false });
      for (const channel of [W.free, outside]) {
        const m = h.slack.userMessage({ channel, user: W.user, text: `nobody to ask in ${channel}` });
        const shortcut = h.slack.messageShortcut({ user: W.admin, channel, messageTs: m.ts, callbackId: 'ask_agent' });
        await h.to.interaction(shortcut);
        const responseUrlId = String(shortcut.response_url).split('/').at(-1);
        const e = await h.slack.waitForCall('response_url', (c) => c.response.id === responseUrlId);
        expect(e.response.ok).toBe(true);
        expect(e.params.response_type).toBe('ephemeral');
        expect(e.params.text).toMatch(/isn't connected to an agent/);
        expect(chatCalls(h).some((c) => new RegExp(`nobody to ask in ${channel}`).test(messageOf(c)))).toBe(false);
      }
    });
  });

  describe('files', () => {
    it('serves files only for the bot token: anything else gets the HTML sign-in page', async () => {
      const f = h.slack.files.add({ name: 'a.txt', mimetype: 'text/plain', content: 'hello' });
      const url = f.url_private_download as string;
      const good = await fetch(url, { headers: { authorization: `Bearer ${h.slack.identity.botToken}` } });
      expect([good.status, good.headers.get('content-type'), await good.text()]).toEqual([200, 'text/plain', 'hello']);
      const bad = await fetch(url, { headers: { authorization: 'Bearer xoxb-wrong' } });
      expect(bad.status).toBe(200);
      expect(bad.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await bad.text()).not.toContain('hello');
    });

    it('appends text files as fenced blocks with their names and says in one line what was not sent', async () => {
      const notes = h.slack.files.add({ name: 'notes.md', mimetype: 'text/markdown', content: `# Notes ${mode}\nship it\n` });
      const image = h.slack.files.add({ name: 'cat.png', mimetype: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]) });
      const big = h.slack.files.add({ name: 'big.log', mimetype: 'text/plain', content: 'x'.repeat(5000) });
      const m = await say(h, { channel: W.general, text: `${botMention(h)} read these ${mode}`, files: [notes, image, big] });
      const call = await agentGot(new RegExp(`read these ${mode}`));
      expect(messageOf(call)).toBe(`read these ${mode}\n\nnotes.md:\n\`\`\`\`markdown\n# Notes ${mode}\nship it\n\`\`\`\``.replace(/````/g, '```'));
      const notice = await h.slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === m.ts && /Not sent to the agent/.test(c.params.text ?? ''));
      expect(notice.params.text).toBe('Not sent to the agent: cat.png (only text files are sent), big.log (too large, over 1 KB).');
      const downloads = h.slack.files.downloads.filter((d) => d.path.includes('notes.md'));
      expect(downloads.length).toBeGreaterThanOrEqual(1);
      expect(downloads.every((d) => d.authorization === `Bearer ${h.slack.identity.botToken}`)).toBe(true);
      // Neither the image nor the file announced over the limit was downloaded; no content in the logs.
      expect(h.slack.files.downloads.some((d) => d.path.includes('cat.png') || d.path.includes('big.log'))).toBe(false);
      expect(h.logs.lines.join('\n')).not.toContain('ship it');
    });

    it('answers a message with only an image in one line, and downloads nothing for a message it does not answer', async () => {
      const image = h.slack.files.add({ name: `only-${mode}.png`, mimetype: 'image/png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]) });
      const m = await say(h, { channel: W.general, text: botMention(h), files: [image] });
      await until(() => postsIn(h, W.general, m.ts).length > 0 && postsIn(h, W.general, m.ts), 'a notice');
      // Give a second notice the time to arrive before counting.
      await new Promise((r) => setTimeout(r, 300));
      expect(postsIn(h, W.general, m.ts).map((c) => c.params.text)).toEqual([
        "I can only read text: attachments aren't forwarded to the agent. Please type your question.",
      ]);

      // Unaddressed (no mention, #general answers mentions only) and unbound: neither file is fetched.
      const quiet = [W.general, W.free].map((channel) => h.slack.files.add({ name: `unasked-${mode}-${channel}.txt`, mimetype: 'text/plain', content: 'private notes' }));
      await say(h, { channel: W.general, text: 'just chatting', files: [quiet[0]!] });
      await say(h, { channel: W.free, text: 'just chatting', files: [quiet[1]!] });
      const marker = h.slack.files.add({ name: `asked-${mode}.txt`, mimetype: 'text/plain', content: 'read me' });
      await say(h, { channel: W.general, text: `${botMention(h)} read this ${mode}`, files: [marker] });
      await agentGot(new RegExp(`read this ${mode}`));
      expect(h.slack.files.downloads.some((d) => d.path.includes(`unasked-${mode}`))).toBe(false);
      expect(h.slack.files.downloads.some((d) => d.path.includes(`asked-${mode}.txt`))).toBe(true);
    });
  });
});
