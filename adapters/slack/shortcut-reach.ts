import type { WebClient } from '@slack/web-api';
import { slackErrorCode, toPlatformError } from './errors.js';

/**
 * Whether the bot can post the answer to an "Ask the agent" shortcut where it was used:
 * - `yes`: its own DM with the asker, or a channel it is a member of;
 * - `no`: a DM between other people, a channel it is not in, or one it cannot see;
 * - `unknown`: Slack did not say (rate limited, down): ask again shortly;
 * - `unchecked`: the installation lacks the `*:read` scope to ask (an app installed from an
 *   older manifest): the shortcut goes ahead as it always did.
 */
export type ShortcutReach = 'yes' | 'no' | 'unknown' | 'unchecked';

/** Codes of `conversations.info` that mean the bot cannot see the conversation at all. */
const CANNOT_SEE = new Set(['channel_not_found', 'not_in_channel', 'is_archived', 'team_access_not_granted']);

/** Asks Slack (`conversations.info`) before the agent is called, so no billed answer goes unheard. */
export async function shortcutReach(client: Pick<WebClient, 'conversations'>, channel: string, asker: string): Promise<ShortcutReach> {
  try {
    const info = await client.conversations.info({ channel });
    const c = (info.channel ?? {}) as { is_im?: boolean; user?: string; is_member?: boolean; is_archived?: boolean };
    if (c.is_archived) return 'no';
    if (c.is_im) return c.user === asker ? 'yes' : 'no';
    return c.is_member === true ? 'yes' : 'no';
  } catch (err) {
    const code = slackErrorCode(err);
    if (code && CANNOT_SEE.has(code)) return 'no';
    return toPlatformError('conversations.info', err).kind === 'forbidden' ? 'unchecked' : 'unknown';
  }
}

/** What the asker reads (ephemerally) when the bot cannot answer where the shortcut was used. */
export const cannotPostForShortcut = (isDirect: boolean): string =>
  isDirect
    ? "I can't post in this conversation, so I can't answer here. Ask me in a direct message with me, or in a channel I've been added to."
    : "I'm not a member of this channel, so I can't answer here. Invite me with `/invite @<my name>` and ask again, or ask me in a direct message.";

/** What the asker reads when Slack would not say whether the bot can post there. */
export const reachUnknownForShortcut =
  "Slack didn't let me check that I can answer in this conversation just now. Please try again in a moment.";
