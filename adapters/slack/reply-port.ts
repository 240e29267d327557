import type { WebClient } from '@slack/web-api';
import { slackConfigOf } from './config.js';
import type { KnownBlock } from '@slack/web-api';
import type { ChunkInfo, ReplyPort, ThreadMessage } from '../../src/core/reply-port.js';
import type { ReplyTarget } from '../../src/core/message.js';
import type { ReplyPortDeps } from '../../src/core/platform-context.js';
import type { Logger } from '../../src/logger.js';
import { setAssistantStatus } from './assistant-status.js';
import { createBoltLogger } from './bolt-logger.js';
import { replyWithFeedback } from './feedback-blocks.js';
import { slackErrorCode, toPlatformError } from './errors.js';
import { neutraliseMentions } from './escape.js';
import { botIdentityOf, findPosted, noticeMetadata, replyMetadata, type PostedLookup } from './posted-chunks.js';
import { renderNotice, renderSlackReply } from './render.js';
import { createAssistantThreads, type AssistantThreads } from './assistant-threads.js';
import { createThreadReadGate, type ThreadReadGate } from './thread-read-gate.js';
import { linesOfThread, linesOfTurns, readThread, compareTs, type BotIds } from './thread-transcript.js';
import { bullPrefix } from '../../src/redis.js';
import { createUserDirectory, type UserDirectory } from './user-directory.js';
import { createWebClient } from './web-client.js';
import { createMultiWorkspaceReplyPort, type InstallationPortLimits } from './multi-workspace-port.js';
import { ReactionGate } from './reaction-gate.js';
import { ChannelPostLine, PACED } from './post-line.js';
import { PostReadiness } from './post-readiness.js';
import { createCachedGoneChannels, type CachedGoneChannels } from './gone-cache.js';
import { Refresher } from '../../src/core/refresher.js';
import { PlatformError } from '../../src/core/errors.js';
import { withTimeout } from '../../src/core/with-timeout.js';

export interface SlackReplyPortOptions {
  /** A WebClient to use instead of one built from the config (tests). */
  client?: WebClient;
  /** Reaction shown while the agent works. @defaultValue config.slack.workingReaction */
  workingReaction?: string;
  /**
   * How often an assistant thread's "is thinking…" is set again while the agent works (Slack
   * drops it two minutes after it was set if nothing was posted). Shorter in tests.
   * @defaultValue 90_000
   */
  statusRefreshMs?: number;
  /** How long a token Slack refused is taken at its word before `auth.test` is asked again (tests). @defaultValue 60_000 */
  tokenRecheckMs?: number;
  /** How long a check that a channel marked gone still is gone holds (tests). @defaultValue 10_000 */
  goneRecheckMs?: number;
  /** "Add to Slack": how many installations' ports a worker keeps (see multi-workspace-port.ts). */
  installationPorts?: InstallationPortLimits;
  /** The gone marks' cache to use (the multi-workspace port's, shared by its installations' ports; it closes it). */
  gone?: CachedGoneChannels;
}

/** How long a refused token is taken at its word before `auth.test` is asked again. */
const TOKEN_RECHECK_MS = 60_000;

/** Most pages of conversations.replies read for thread context (200 messages each). */
const MAX_THREAD_PAGES = 5;

/**
 * The worker's side of Slack: Web API calls only. Every failure is a PlatformError so the
 * worker's error policy decides (429 → wait Retry-After; not_in_channel → give up).
 */
export function createSlackReplyPort(deps: ReplyPortDeps, options: SlackReplyPortOptions = {}): ReplyPort {
  const slack = slackConfigOf(deps.config);
  if (!slack) throw new Error('SLACK_BOT_TOKEN is missing: the Slack reply port needs it to post replies');
  // "Add to Slack": one port per installation's token, all with one cache of gone channels.
  if (slack.oauth && !options.client) {
    const gone = createCachedGoneChannels(deps.redis, deps.config, { logger: deps.logger });
    const port = createMultiWorkspaceReplyPort(deps, (d, client) => createSlackReplyPort(d, { ...options, client, gone }), options.installationPorts);
    return Object.assign(port, { close: () => gone.close() });
  }
  if (!options.client && !slack.botToken) throw new Error('SLACK_BOT_TOKEN is missing: the Slack reply port needs it to post replies');
  const logger = deps.logger.child({ platform: 'slack' });
  const client = options.client ?? createWebClient(slack.botToken!, { apiUrl: slack.apiUrl, logger: createBoltLogger(logger) });
  const reaction = options.workingReaction ?? slack.workingReaction;
  const gate = new ReactionGate(logger);
  const users = createUserDirectory(client, 10 * 60_000);
  const botIdentity = botIdentityOf(client);
  // The bot's own IDs: its mentions are dropped from thread transcripts (they address it) and
  // its messages there are labelled as the agent's.
  const ownIds = (): Promise<BotIds> => botIdentity().then((b) => ({ userId: b.userId, botId: b.botId }), () => ({}));
  // Assistant threads' own record of their exchange (adapters/slack/assistant-threads.ts).
  const threads = createAssistantThreads(deps.redis, `${bullPrefix(deps.config)}:chat`, deps.config.threadContext);
  const readGate = createThreadReadGate(deps.redis, `${bullPrefix(deps.config)}:chat`);

  // Assistant threads whose status line this port set and no reply has cleared yet (Slack
  // clears it when the bot posts in the thread; a silent failure posts nothing).
  const statusShown = new Set<string>();
  const threadKey = (target: ReplyTarget) => `${target.channelId}:${target.threadId}`;
  // Slack drops the status two minutes after it was set with nothing posted; one attempt at the
  // agent lasts at most AGENT_TIMEOUT_MS, and a retry (on whichever worker) starts again.
  const statusRefresher = new Refresher({ refreshMs: options.statusRefreshMs ?? 90_000, maxMs: deps.config.agent?.timeoutMs ?? 120_000 });
  const showThinking = (target: ReplyTarget) => setAssistantStatus(client, logger, target, 'is thinking…');

  // Slack clears the status on any post of the app in the thread, a notice too (files not sent,
  // quota, busy): one posted while the agent still works would leave the user without it until
  // the answer. It is set again on the next turn of the event loop, not at once: a notice that
  // ends the work (a give-up) is followed by stopWorking within the same turn, which cancels it.
  const restores = new Map<string, { timer?: NodeJS.Immediate; sent?: Promise<void> }>();
  const restoreAfterNotice = (target: ReplyTarget) => {
    const key = threadKey(target);
    if (restores.has(key)) return;
    const entry: { timer?: NodeJS.Immediate; sent?: Promise<void> } = {};
    entry.timer = setImmediate(() => {
      entry.timer = undefined;
      if (!statusShown.has(key)) return void restores.delete(key);
      entry.sent = showThinking(target).finally(() => restores.get(key) === entry && restores.delete(key));
    });
    restores.set(key, entry);
  };
  /** Cancels a restore not yet sent and waits (1 s at most) for one under way: a reply or a clear must not be overtaken by it. */
  const settleRestore = async (key: string) => {
    const entry = restores.get(key);
    if (!entry) return;
    restores.delete(key);
    if (entry.timer) clearImmediate(entry.timer);
    else if (entry.sent) await withTimeout(entry.sent, 1_000, () => undefined);
  };

  // Slack refused the bot's token, or a channel: until a check says otherwise, no agent call is
  // made for an answer that could not be posted (`ready`, post-readiness.ts).
  // Channels the ingress heard went away: asked before every agent call, served from memory.
  const gone = options.gone ?? createCachedGoneChannels(deps.redis, deps.config, { logger });
  const readiness = new PostReadiness(client, options.tokenRecheckMs ?? TOKEN_RECHECK_MS, gone, options.goneRecheckMs);
  // Slack's one-post-a-second limit per channel: after a 429, this port's posts there go in line.
  const postLine = new ChannelPostLine();

  const post = async (target: ReplyTarget, text: string, what: 'reply' | 'notice', metadata?: ReturnType<typeof replyMetadata> | ReturnType<typeof noticeMetadata>, blocks?: KnownBlock[]) => {
    const key = threadKey(target);
    if (target.assistantThread && what === 'reply') {
      // The reply clears the status for good: no refresh may set it again afterwards.
      void statusRefresher.stop(key);
      await settleRestore(key);
    }
    for (;;) {
      try {
        const res = await postLine.run(target.channelId, () => client.chat.postMessage({
          channel: target.channelId,
          text: neutraliseMentions(text),
          ...(blocks ? { blocks } : {}),
          ...(!target.inline && target.threadId ? { thread_ts: target.threadId } : {}),
          ...(metadata ? { metadata } : {}),
          unfurl_links: false,
          unfurl_media: false,
          link_names: false,
        }));
        if (target.assistantThread && what === 'reply') statusShown.delete(key);
        else if (target.assistantThread && statusShown.has(key)) restoreAfterNotice(target);
        return res.ts;
      } catch (err) {
        const e = toPlatformError('chat.postMessage', err);
        readiness.refused(target.channelId, e);
        if (e.kind === 'rate_limited' && e.code !== PACED) postLine.limited(target.channelId, e.retryAfterMs ?? 1_000);
        // The answer is billed and its text is fine: what Slack refused is an extra (the feedback
        // buttons' blocks, the metadata). Retrying cannot change that, and "try again" would bill
        // the question again to fail the same way, so the text goes out without that extra.
        const extra = e.code === undefined ? undefined : refusedExtra(e.code, blocks !== undefined, metadata !== undefined);
        if (extra) {
          logger.warn({ channel: target.channelId, code: e.code, what }, `Slack refused the ${what}'s ${extra === 'blocks' ? 'blocks (feedback buttons)' : 'metadata'} (${e.code}): posting it without them`);
          if (extra === 'blocks') blocks = undefined;
          else metadata = undefined;
          continue;
        }
        if (e.kind === 'refused') logger.warn({ channel: target.channelId, code: e.code, what }, `Slack refused the ${what}: ${e.message}`);
        throw e;
      }
    }
  };

  /** Whether an earlier attempt's post of this chunk (or give-up notice) reached Slack (its answer was lost). */
  const alreadyPosted = async (target: ReplyTarget, lookup: PostedLookup): Promise<boolean> => {
    const what = 'chunk' in lookup.part ? 'reply chunk' : 'give-up notice';
    const where = { channel: target.channelId, ...('chunk' in lookup.part ? { chunk: lookup.part.chunk } : {}) };
    const result = await findPosted(client, target, lookup, await botIdentity());
    if (result.found) {
      logger.info(where, `this ${what} is already in Slack (posted before a restart): not posting it again`);
      return true;
    }
    if (!result.complete) logger.warn(where, `gave up looking for an earlier post of this ${what} (too many newer messages): posting it`);
    return false;
  };

  return {
    platform: 'slack',
    render: (markdown) => renderSlackReply(markdown),
    ready: (target) => readiness.check(target.channelId),
    // The gone marks' subscription; a shared cache is closed by its owner.
    close: async () => {
      if (!options.gone) await gone.close();
    },
    async postChunk(target, chunk, index, info) {
      const messageId = info?.messageId ?? target.messageId;
      const lookup = { messageId, part: { chunk: index }, text: neutraliseMentions(chunk), redact: info?.redact };
      if (info?.mayExist && (await alreadyPosted(target, lookup))) return;
      const ts = await post(target, chunk, 'reply', replyMetadata(messageId, index), feedbackBlocks(chunk, index, info));
      // The agent's turn in the assistant thread's record (a notice is not one). Best effort:
      // the post is out, and a turn missing from the record is only missing from a transcript.
      if (target.assistantThread && target.threadId && ts) {
        await threads
          .addTurns(target.channelId, target.threadId, [{ ts, agent: true, text: chunk }])
          .catch((err: unknown) => logger.warn({ channel: target.channelId, err: String(err) }, 'could not record the reply in the assistant thread record'));
      }
    },
    // Not a turn of the assistant thread's record: a notice is the bridge's, not the agent's.
    async postNotice(target, text, info) {
      // Nobody can read it there, and each try is one more refusal in the log: the worker's
      // give-up line (and the failure log) is where this message's end is told.
      if (readiness.refusedIn(target.channelId) !== undefined) return;
      const shown = renderNotice(text);
      if (info?.mayExist) {
        // The notice costs nothing: one Slack could not be read back for is said again, not dropped.
        const found = await alreadyPosted(target, { messageId: info.messageId, part: { notice: true }, text: neutraliseMentions(shown) }).catch((err: unknown) => {
          logger.warn({ channel: target.channelId, err: String(err) }, 'could not read Slack back for a give-up notice posted before a restart: posting it');
          return false;
        });
        if (found) return;
      }
      await post(target, shown, 'notice', info ? noticeMetadata(info.messageId) : undefined);
    },

    async startWorking(target) {
      // Assistant threads have a status line ("is thinking…") where channels get a reaction.
      if (target.assistantThread) {
        statusShown.add(threadKey(target));
        statusRefresher.start(threadKey(target), () => showThinking(target));
        return showThinking(target);
      }
      // While Slack rate-limits reactions, none is added (and so none needs taking down); nor in
      // a channel archived or deleted, where Slack refuses them.
      const key = reactionKey(target);
      if (gate.open() && !NO_REACTIONS.has((await readiness.heardGone(target.channelId)) ?? '') && (await react(client, logger, gate, 'add', target, reaction, 'already_reacted')).done) gate.added(key);
      else gate.skip(key);
    },

    async stopWorking(target, outcome) {
      // Slack clears the status line itself when the reply is posted; a failure, or an end with
      // nothing posted (errors set to silent), clears it here.
      if (target.assistantThread) {
        // Synchronously first: a restore a give-up notice scheduled is cancelled before it runs.
        const restored = settleRestore(threadKey(target));
        await statusRefresher.stop(threadKey(target));
        await restored;
        const shown = statusShown.delete(threadKey(target));
        if (outcome === 'failed' || shown) await setAssistantStatus(client, logger, target, '');
        // A failure gets the warning reaction on the user's message, as in a channel (reactions
        // work in DMs): with the error policy `reaction` it is the user's only sign of it.
        // Added after the status is cleared, so the thread never shows both.
        if (outcome === 'failed' && gate.open()) await react(client, logger, gate, 'add', target, 'warning', 'already_reacted');
        return;
      }
      if (gate.takeDown(reactionKey(target))) await removeWorkingReaction(client, logger, gate, target, reaction);
      if (outcome === 'failed' && gate.open() && !NO_REACTIONS.has(readiness.refusedIn(target.channelId) ?? '')) await react(client, logger, gate, 'add', target, 'warning', 'already_reacted');
    },

    fetchThread: async (target, limit) => fetchThread(client, users, threads, readGate, logger, target, limit, await ownIds()),
    nameOf: (_target, userId) => users.get(userId).then((u) => u.name, () => undefined),
  };
}

/** The last chunk of a reply the agent service identified carries the feedback buttons. */
function feedbackBlocks(chunk: string, index: number, info?: ChunkInfo): KnownBlock[] | undefined {
  if (!info?.agentMessageId || !info.instanceId || index !== info.total - 1) return undefined;
  return replyWithFeedback(neutraliseMentions(chunk), { instanceId: info.instanceId, agentMessageId: info.agentMessageId });
}


/** Slack's refusals of a post's blocks: the message is fine without them. */
const BLOCKS_REFUSED = new Set(['invalid_blocks', 'invalid_blocks_format', 'msg_blocks_too_long']);
/** Slack's refusals of a post's metadata: the message is fine without it (only a crash's lookup needs it). */
const METADATA_REFUSED = new Set(['invalid_metadata_format', 'invalid_metadata_schema', 'metadata_too_large', 'metadata_must_be_sent_from_app']);

/** Which extra of a post Slack's `code` refused, if the post carried it. */
function refusedExtra(code: string, hasBlocks: boolean, hasMetadata: boolean): 'blocks' | 'metadata' | undefined {
  if (hasBlocks && BLOCKS_REFUSED.has(code)) return 'blocks';
  if (hasMetadata && METADATA_REFUSED.has(code)) return 'metadata';
  return undefined;
}

/** Where a thread read was cut short. */
const THREAD_GAP: ThreadMessage = { author: '', text: '', isBot: false, gap: true };

/**
 * Refusals of a channel in which Slack refuses reactions too. Not `not_in_channel`: the :warning:
 * there is tried as before (it is the user's one sign of the failure if Slack takes it).
 */
const NO_REACTIONS: ReadonlySet<string> = new Set(['is_archived', 'channel_not_found']);

/** Which message a working reaction is on. */
const reactionKey = (target: ReplyTarget) => `${target.channelId}/${target.messageId}`;

/** What became of a reaction call: done (or nothing to change), refused, or refused with a 429 and the wait Slack asked for. */
type Reacted = { done: true } | { done: false; retryAfterMs?: number };

/**
 * Reactions are best effort: a missing one never holds up or fails a reply, and a failure is
 * never thrown. A 429 also closes the gate for the wait Slack asked for.
 */
async function react(client: WebClient, logger: Logger, gate: ReactionGate, op: 'add' | 'remove', target: ReplyTarget, name: string, harmless: string): Promise<Reacted> {
  try {
    const args = { channel: target.channelId, timestamp: target.messageId, name };
    await (op === 'add' ? client.reactions.add(args) : client.reactions.remove(args));
    return { done: true };
  } catch (err) {
    const code = slackErrorCode(err);
    if (code === harmless) return { done: true };
    const e = toPlatformError(`reactions.${op}`, err);
    if (e.kind === 'rate_limited') {
      const retryAfterMs = e.retryAfterMs ?? 1_000;
      gate.limited(retryAfterMs);
      return { done: false, retryAfterMs };
    }
    logger.warn({ channel: target.channelId, reaction: name, code }, `could not ${op} the :${name}: reaction: ${e.message}`);
    return { done: false };
  }
}

/** Most tries at taking down a working reaction Slack refused with a 429. */
const REMOVAL_TRIES = 3;

/**
 * Takes the working reaction down. A removal Slack refused with a 429 is tried again once the
 * wait it asked for is over, in the background (the reply is not held up), so an answered
 * message does not keep its :eyes:.
 */
async function removeWorkingReaction(client: WebClient, logger: Logger, gate: ReactionGate, target: ReplyTarget, name: string, tries = 1): Promise<void> {
  const r = await react(client, logger, gate, 'remove', target, name, 'no_reaction');
  if (r.done || r.retryAfterMs === undefined) return;
  if (tries >= REMOVAL_TRIES) {
    logger.warn({ channel: target.channelId, reaction: name }, `could not remove the :${name}: reaction: Slack kept rate-limiting it`);
    return;
  }
  setTimeout(() => void removeWorkingReaction(client, logger, gate, target, name, tries + 1), r.retryAfterMs).unref();
}

export { compareTs };

async function fetchThread(
  client: WebClient,
  users: UserDirectory,
  threads: AssistantThreads,
  gate: ThreadReadGate,
  logger: Logger,
  target: ReplyTarget,
  limit: number,
  own: BotIds,
): Promise<ThreadMessage[]> {
  if (!target.threadId || target.inline || limit <= 0) return [];
  if (compareTs(target.threadId, target.messageId) >= 0) return [];
  if (!target.assistantThread) {
    await gate.check(target.installation);
    let read;
    try {
      read = await readThread(client, target.channelId, target.threadId, target.messageId, MAX_THREAD_PAGES);
    } catch (err) {
      if (err instanceof PlatformError && err.kind === 'rate_limited') await gate.close(target.installation, err.retryAfterMs ?? 60_000).catch(() => {});
      throw err;
    }
    if (read.refusedForMs !== undefined) await gate.close(target.installation, read.refusedForMs).catch(() => {});
    const lines = await linesOfThread(users, read.earlier, own, limit);
    // Read from the oldest: what a limit cut short is the newest part, just before the question.
    return read.complete ? lines : [...lines, THREAD_GAP];
  }
  // An assistant thread is a DM between one user and the bot: the bridge saw every message
  // and every reply, so its own record is the transcript, and Slack is not read at all.
  const record = await threads.turns(target.channelId, target.threadId);
  if (record.complete) return linesOfTurns(users, record.turns, target.messageId, own, limit);
  // A thread the bridge did not see from its start (before this record existed): read it from
  // Slack; when Slack rate-limits that (apps outside the Marketplace: one read a minute per
  // workspace), answer with what the record holds rather than have the user wait a minute.
  try {
    return linesOfThread(users, (await readThread(client, target.channelId, target.threadId, target.messageId, MAX_THREAD_PAGES)).earlier, own, limit);
  } catch (err) {
    if (!(err instanceof PlatformError) || err.kind !== 'rate_limited') throw err;
    logger.info({ channel: target.channelId }, 'Slack rate-limited reading the assistant thread: answering with the turns the bridge recorded');
    return linesOfTurns(users, record.turns, target.messageId, own, limit);
  }
}
