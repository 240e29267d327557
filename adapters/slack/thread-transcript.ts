import type { WebClient } from '@slack/web-api';
import type { ThreadMessage } from '../../src/core/reply-port.js';
import type { AssistantTurn } from './assistant-threads.js';
import { toPlatformError } from './errors.js';
import { REPLY_EVENT_TYPE } from './posted-chunks.js';
import { contextText } from './shown-text.js';
import { slackTextToPlain } from './slack-text.js';
import type { UserDirectory } from './user-directory.js';

/** A message as `conversations.replies` returns it (with `include_all_metadata`). */
export interface SlackThreadMessage {
  ts?: string;
  user?: string;
  bot_id?: string;
  subtype?: string;
  username?: string;
  text?: string;
  /** What an app's message shows when `text` is empty; a forwarded message's words (see shown-text.ts). */
  blocks?: unknown;
  attachments?: unknown;
  files?: unknown;
  bot_profile?: { name?: string };
  metadata?: { event_type?: string };
}

/** The bot's own IDs: its messages are the agent's, its mentions address it. */
export interface BotIds {
  userId?: string;
  botId?: string;
}

/** Slack's root of an assistant thread: written as the user, its text is the thread's title. */
export const ASSISTANT_ROOT_SUBTYPE = 'assistant_app_thread';

/**
 * Who a message read back from a thread is, for a transcript: Slack's assistant-thread root
 * (the title, nobody's words), the agent (a reply chunk the bridge posted, which carries its
 * metadata), one of the bridge's own notices (files not sent, a failure: not the agent's
 * words), or someone else.
 */
export function speakerOf(m: SlackThreadMessage, own: BotIds): 'root' | 'agent' | 'notice' | 'other' {
  if (m.subtype === ASSISTANT_ROOT_SUBTYPE) return 'root';
  const isOwn = (own.botId !== undefined && m.bot_id === own.botId) || (own.userId !== undefined && m.user === own.userId);
  if (!isOwn) return 'other';
  return m.metadata?.event_type === REPLY_EVENT_TYPE ? 'agent' : 'notice';
}

/** What reading a thread up to a message found. */
export interface ThreadRead {
  /** Messages older than the one being answered, oldest first. */
  earlier: SlackThreadMessage[];
  /** The thread's first message, when the first page was read. */
  root?: SlackThreadMessage;
  /**
   * False when the read stopped before the message being answered: a page after the first was
   * refused (429), or `maxPages` were read. `earlier` is then the oldest part of the thread.
   */
  complete: boolean;
  /** When a later page was refused: the wait Slack asked for. */
  refusedForMs?: number;
}

/** Orders Slack timestamps (`1700000000.000100`) exactly; a double loses the last digits. */
export function compareTs(a: string, b: string): number {
  const [as = '0', af = ''] = a.split('.');
  const [bs = '0', bf = ''] = b.split('.');
  const secs = Number(as) - Number(bs);
  if (secs !== 0) return Math.sign(secs);
  const fa = af.padEnd(6, '0');
  const fb = bf.padEnd(6, '0');
  return fa < fb ? -1 : fa > fb ? 1 : 0;
}

/**
 * Reads a thread with `conversations.replies`, at most `maxPages` pages of 200. A 429 on the
 * first page is thrown (a PlatformError); on a later one the pages read are the answer:
 * Slack's limits for apps outside the Marketplace (15 a page, one call a minute) refuse the
 * next page at once, and reading again from the first page would be refused there every time.
 */
export async function readThread(client: WebClient, channel: string, threadTs: string, beforeTs: string, maxPages: number): Promise<ThreadRead> {
  const earlier: SlackThreadMessage[] = [];
  let root: SlackThreadMessage | undefined;
  let cursor: string | undefined;
  let complete = false;
  let refusedForMs: number | undefined;
  for (let page = 0; page < maxPages; page++) {
    let res;
    try {
      res = await client.conversations.replies({ channel, ts: threadTs, limit: 200, include_all_metadata: true, ...(cursor ? { cursor } : {}) });
    } catch (err) {
      const e = toPlatformError('conversations.replies', err);
      if (e.kind === 'rate_limited' && page > 0) {
        refusedForMs = e.retryAfterMs ?? 60_000;
        break;
      }
      throw e;
    }
    let reached = false;
    for (const m of (res.messages ?? []) as SlackThreadMessage[]) {
      if (m.ts === threadTs) root = m;
      if (m.ts && compareTs(m.ts, beforeTs) < 0) earlier.push(m);
      else if (m.ts) reached = true;
    }
    cursor = res.response_metadata?.next_cursor || undefined;
    // Oldest first: once the message being answered is read, everything before it has been.
    if (reached || !res.has_more || !cursor) {
      complete = true;
      break;
    }
  }
  return { earlier: earlier.sort((a, b) => compareTs(a.ts!, b.ts!)), root, complete, ...(refusedForMs !== undefined ? { refusedForMs } : {}) };
}

/** The people's and the agent's messages of a thread read back, as the bridge records an assistant thread's turns. */
export function turnsOf(messages: SlackThreadMessage[], own: BotIds): AssistantTurn[] {
  const turns: AssistantTurn[] = [];
  for (const m of messages) {
    if (!m.ts) continue;
    const who = speakerOf(m, own);
    if (who === 'agent') turns.push({ ts: m.ts, agent: true, text: m.text ?? '' });
    else if (who === 'other' && m.user && !m.bot_id) turns.push({ ts: m.ts, user: m.user, text: contextText(m) });
  }
  return turns;
}

/** Transcript lines of a thread read back from Slack: no root, no notices of the bridge's own. */
export function linesOfThread(users: UserDirectory, messages: SlackThreadMessage[], own: BotIds, limit: number): Promise<ThreadMessage[]> {
  const picked = messages.filter((m) => {
    const who = speakerOf(m, own);
    return who === 'agent' || who === 'other';
  });
  return Promise.all(
    picked.slice(-limit).map(async (m) => {
      if (speakerOf(m, own) === 'agent') return { author: 'agent', text: slackTextToPlain(m.text ?? '', own.userId), isBot: true };
      const isBot = Boolean(m.bot_id) || m.subtype === 'bot_message';
      let author = m.bot_profile?.name ?? m.username ?? (isBot ? 'bot' : (m.user ?? 'someone'));
      if (!isBot && m.user) author = await users.get(m.user).then((u) => u.name, () => m.user!);
      return { author, text: slackTextToPlain(contextText(m), own.userId), isBot };
    }),
  );
}

/** Transcript lines of an assistant thread's recorded turns older than `beforeTs` (each ts once). */
export function linesOfTurns(users: UserDirectory, turns: AssistantTurn[], beforeTs: string, own: BotIds, limit: number): Promise<ThreadMessage[]> {
  const byTs = new Map<string, AssistantTurn>();
  for (const t of turns) if (compareTs(t.ts, beforeTs) < 0) byTs.set(t.ts, t);
  const picked = [...byTs.values()].sort((a, b) => compareTs(a.ts, b.ts)).slice(-limit);
  return Promise.all(
    picked.map(async (t) => {
      const text = slackTextToPlain(t.text, own.userId);
      if (t.agent || !t.user) return { author: 'agent', text, isBot: true };
      return { author: await users.get(t.user).then((u) => u.name, () => t.user!), text, isBot: false };
    }),
  );
}
