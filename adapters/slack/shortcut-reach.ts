import type { WebClient } from '@slack/web-api';
import { slackErrorCode } from './errors.js';

/**
 * Whether the bot can post the answer to an "Ask the agent" shortcut where it was used:
 * - `yes`: its own DM with the asker, or a channel it is a member of (or Slack said nothing against it);
 * - `no`: Slack said so: a DM between other people, a channel it is not in, or one it cannot see;
 * - `unchecked`: Slack did not say (rate limited, down, a missing `*:read` scope, a method it
 *   does not know): the shortcut goes ahead as it always did. Only a definite "no" stops a
 *   user's question; a check that could not be made must not.
 */
export type ShortcutReach = 'yes' | 'no' | 'unchecked';

/** Codes of `conversations.info` that mean the bot cannot see the conversation at all. */
const CANNOT_SEE = new Set(['channel_not_found', 'not_in_channel', 'is_archived', 'team_access_not_granted']);

/** Asks Slack (`conversations.info`) before the agent is called, so no billed answer goes unheard. */
export async function shortcutReach(client: Pick<WebClient, 'conversations'>, channel: string, asker: string): Promise<ShortcutReach> {
  try {
    const info = await client.conversations.info({ channel });
    const c = (info.channel ?? {}) as { is_im?: boolean; user?: string; is_member?: boolean; is_archived?: boolean };
    if (c.is_archived === true || c.is_member === false) return 'no';
    if (c.is_im === true && typeof c.user === 'string') return c.user === asker ? 'yes' : 'no';
    return 'yes';
  } catch (err) {
    const code = slackErrorCode(err);
    return code && CANNOT_SEE.has(code) ? 'no' : 'unchecked';
  }
}

/** What the asker reads (ephemerally) when the bot cannot answer where the shortcut was used. */
export const cannotPostForShortcut = (isDirect: boolean): string =>
  isDirect
    ? "I can't post in this conversation, so I can't answer here. Ask me in a direct message with me, or in a channel I've been added to."
    : "I'm not a member of this channel, so I can't answer here. Invite me with `/invite @<my name>` and ask again, or ask me in a direct message.";
