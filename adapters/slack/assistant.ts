import { Assistant, type App } from '@slack/bolt';
import { DM_CHANNEL, dmBindingChannel } from '../../src/bindings/dm.js';
import type { BindingStore } from '../../src/bindings/types.js';
import type { FirstDelivery } from '../../src/ingress/seen-ledger.js';
import type { Logger } from '../../src/logger.js';
import { DEFAULT_SUGGESTED_PROMPTS, type SuggestedPromptStore } from '../../src/prompts/suggested-prompts.js';
import { asAssistantMessage } from './assistant-message.js';
import type { AssistantThreads } from './assistant-threads.js';
import { slackErrorCode, toPlatformError } from './errors.js';
import { shownText } from './shown-text.js';
import { slackTextToPlain } from './slack-text.js';
import { ASSISTANT_ROOT_SUBTYPE, readThread, turnsOf, type BotIds } from './thread-transcript.js';
import type { WebClient } from '@slack/web-api';
import type { createMessageHandler } from './message-listener.js';

export interface AssistantDeps {
  threads: AssistantThreads;
  prompts: SuggestedPromptStore;
  bindings: BindingStore;
  logger: Logger;
  /** The same handler as every other message: normalise, files, ingress. */
  handleMessage: ReturnType<typeof createMessageHandler>;
  /** First deliveries (src/ingress/seen-ledger.ts): a redelivered thread start is handled once. */
  seen?: Pick<FirstDelivery, 'first' | 'forget'>;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
/** Longest thread title set from the first message. */
const TITLE_CHARS = 60;

/**
 * The first message as a thread title: what the user sees (no `<url|label>` markup), on one
 * line, cut at a grapheme boundary (a cut inside an emoji's surrogate pair turned 😀… into 🐦).
 */
export function titleOf(text: string, botUserId?: string): string {
  const flat = slackTextToPlain(text, botUserId).replace(/\s+/g, ' ').trim();
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(flat)].map((g) => g.segment);
  return graphemes.length > TITLE_CHARS ? `${graphemes.slice(0, TITLE_CHARS - 1).join('').trimEnd()}…` : flat;
}

/**
 * Slack's AI app surface (Bolt's `Assistant`, needs a paid plan and `assistant_view` in the
 * manifest). A thread starts → the suggested prompts of the binding that will answer; the
 * user switches channel → remembered for the thread; a message → the ingress, answered in
 * the thread by the instance bound to the thread's context channel, else the workspace's DM binding,
 * with the thread's transcript as context and the status line while the agent works.
 */
export function registerAssistant(app: App, deps: AssistantDeps): void {
  const { logger } = deps;

  /**
   * A thread whose start the bridge never saw (it was down, its record expired, or Slack sent
   * no event): Slack roots every assistant thread in a message of subtype
   * `assistant_app_thread`, so one read of the thread tells, and its earlier messages become
   * the thread's record. Remembered either way, so a thread is read at most once. When Slack
   * does not answer (a 429 under the one-read-a-minute limit), this message is a plain DM
   * thread message and the next one asks again.
   */
  const recognise = async (client: WebClient, dm: string, threadTs: string, ts: string, own: BotIds): Promise<'assistant' | 'plain' | undefined> => {
    try {
      const read = await readThread(client, dm, threadTs, ts, 1);
      const isAssistant = read.root?.subtype === ASSISTANT_ROOT_SUBTYPE;
      await deps.threads.recognise(dm, threadTs, isAssistant, { turns: turnsOf(read.earlier, own), complete: read.complete });
      if (isAssistant) logger.info({ channel: dm }, 'an assistant thread whose start the bridge did not see: recognised from its root message');
      return isAssistant ? 'assistant' : 'plain';
    } catch (err) {
      logger.warn({ channel: dm, code: toPlatformError('conversations.replies', err).code }, 'could not read the DM thread to tell whether it is an assistant thread');
      return undefined;
    }
  };

  /**
   * Prompts of the binding that will answer (the context channel's when it is bound, else the
   * workspace's DM binding's; prompts set under the shared `dm` before DMs were per workspace
   * still count), else defaults: never another binding's prompts than the answering one's.
   */
  const promptsFor = async (contextChannel: string | undefined, team: string | undefined): Promise<string[]> => {
    const dm = dmBindingChannel(team);
    for (const channel of [contextChannel, dm]) {
      if (!channel) continue;
      if (!(await deps.bindings.get('slack', channel))) continue;
      const own = (await deps.prompts.get('slack', channel)) ?? (channel === dm && dm !== DM_CHANNEL ? await deps.prompts.get('slack', DM_CHANNEL) : undefined);
      return own?.length ? own : DEFAULT_SUGGESTED_PROMPTS;
    }
    return DEFAULT_SUGGESTED_PROMPTS;
  };
  /** The workspace an assistant event comes from. */
  const teamOf = (body: unknown, context: { teamId?: string }) => str((body as Record<string, unknown>).team_id) ?? context.teamId;

  app.assistant(
    new Assistant({
      // Bolt's default store writes to the first bot message's metadata; the bridge keeps context in Redis.
      threadContextStore: {
        get: async () => ({}),
        save: async () => undefined,
      },
      threadStarted: async ({ event, body, context, setSuggestedPrompts }) => {
        const thread = event.assistant_thread;
        // Slack redelivers an event it thinks was not acked in time: one thread start, one set of prompts.
        const startId = `${thread.channel_id}:${thread.thread_ts}:assistant_thread_started`;
        if (deps.seen && !(await deps.seen.first('slack', startId))) {
          logger.debug({ messageId: startId }, 'assistant thread start already handled (a redelivery)');
          return;
        }
        const contextChannel = str(thread.context?.channel_id);
        let titles: string[];
        try {
          // Seen from its start: the bridge's record of its turns is the whole thread.
          await deps.threads.setContextChannel(thread.channel_id, thread.thread_ts, contextChannel, true);
          titles = await promptsFor(contextChannel, teamOf(body, context));
        } catch (err) {
          // Not handled after all: a redelivery may try again.
          await deps.seen?.forget('slack', startId);
          throw err;
        }
        try {
          await setSuggestedPrompts({ prompts: titles.map((title) => ({ title, message: title })) });
        } catch (err) {
          logger.warn({ code: slackErrorCode(err) }, 'could not set the suggested prompts');
        }
      },
      threadContextChanged: async ({ event, body, context, setSuggestedPrompts }) => {
        const thread = event.assistant_thread;
        const contextChannel = str(thread.context?.channel_id);
        await deps.threads.setContextChannel(thread.channel_id, thread.thread_ts, contextChannel);
        // Another channel's instance answers from now on: suggest its prompts, not the old one's.
        try {
          const titles = await promptsFor(contextChannel, teamOf(body, context));
          await setSuggestedPrompts({ prompts: titles.map((title) => ({ title, message: title })) });
        } catch (err) {
          logger.warn({ code: slackErrorCode(err) }, 'could not set the suggested prompts');
        }
      },
      userMessage: async ({ body, message, context, client, setTitle }) => {
        const m = message as unknown as Record<string, unknown>;
        const dm = str(m.channel);
        const threadTs = str(m.thread_ts);
        const ts = str(m.ts);
        if (!dm || !threadTs || !ts) return;
        // Bolt hands over every threaded DM message; only a thread Slack started as an
        // assistant thread gets the assistant treatment. A reply in an ordinary DM thread is
        // an ordinary DM message (reactions, its own text).
        const own = { userId: context.botUserId, botId: context.botId };
        const kind = (await deps.threads.kind(dm, threadTs).catch(() => 'assistant' as const)) ?? (await recognise(client, dm, threadTs, ts, own));
        if (kind !== 'assistant') {
          await deps.handleMessage(body, undefined, context);
          return;
        }
        const contextChannel = await deps.threads.contextChannel(dm, threadTs).catch(() => undefined);
        // Bolt's context carries the ack hold: a delivery refused while another is under way is not acked.
        const outcome = await deps.handleMessage(body, (msg) => asAssistantMessage(msg, contextChannel), context);
        if (outcome?.status !== 'queued') return;
        const text = str(m.text);
        const user = str(m.user);
        // The user's turn in the thread's record: the worker's transcript reads it (assistant-threads.ts).
        if (user) {
          await deps.threads
            .addTurns(dm, threadTs, [{ ts, user, text: shownText(m) }])
            .catch((err: unknown) => logger.warn({ err: String(err) }, 'could not record the message in the assistant thread record'));
        }
        const title = text ? titleOf(text, own.userId) : '';
        if (title && (await deps.threads.claimTitle(dm, threadTs).catch(() => false))) {
          await setTitle(title).catch((err: unknown) => logger.warn({ code: slackErrorCode(err) }, 'could not set the assistant thread title'));
        }
      },
    }),
  );
}
