import type { CommandReply, ParsedCommand } from '../../../src/commands/types.js';

/**
 * What an admin reads about thread context while the bot runs without the Message Content
 * intent: Discord then blanks other people's messages in every read, so the transcript holds
 * only the bot's replies and messages that mention it. Workers cannot tell an empty message
 * from a blanked one; the admin who turns context on (or checks `/agent status`) is told here.
 */
export const MENTION_ONLY_CONTEXT_NOTE =
  "Mention-only mode: Discord hasn't granted this bot the Message Content intent, so thread context can only include the bot's own replies and messages that mention it; other messages can't be read and are left out. " +
  'To send whole threads: Discord Developer Portal → your application → Bot → Privileged Gateway Intents → "Message Content Intent", then restart agent-bridge.';

/** The reply, with the mention-only note after `status` and after turning thread context on. */
export function withMentionOnlyNote(reply: CommandReply, parsed: ParsedCommand, mentionOnly: boolean): CommandReply {
  if (!mentionOnly) return reply;
  const contextOn = parsed.name === 'set' && reply.ok && parsed.setting.trim().toLowerCase() === 'context' && parsed.value.trim().toLowerCase() === 'thread';
  if (parsed.name !== 'status' && !contextOn) return reply;
  return { ...reply, lines: [...reply.lines, MENTION_ONLY_CONTEXT_NOTE] };
}
