import { PermissionFlagsBits, type Message } from 'discord.js';

/**
 * Whether Discord has, for sure, taken away the bot's right to post where `message` was sent:
 * its roles grant View Channel and Send Messages (Send Messages in Threads in a thread) but the
 * channel's overwrites deny one of them, a locked thread is archived, or the bot is timed out.
 * Such a message is never sent to the agent: the call would be billed and nobody could read
 * its answer.
 *
 * Anything less certain counts as "may post" (no cached member, roles that never granted the
 * permission, a guild whose roles discord.js cannot read): the post then fails and is logged as
 * before. A bot silenced everywhere by a wrong verdict would be far worse than one billed call.
 */
export function botMayNotPost(message: Message): boolean {
  if (!message.inGuild()) return false;
  try {
    const me = message.guild.members.me;
    if (!me) return false;
    if (me.isCommunicationDisabled()) return true;
    const byRoles = me.permissions;
    if (byRoles.has(PermissionFlagsBits.Administrator)) return false;
    const channel = message.channel;
    const needed = [PermissionFlagsBits.ViewChannel, channel.isThread() ? PermissionFlagsBits.SendMessagesInThreads : PermissionFlagsBits.SendMessages];
    if (!byRoles.has(needed)) return false;
    const here = channel.permissionsFor(me);
    if (here && !here.has(needed)) return true;
    return channel.isThread() && channel.archived === true && channel.locked === true && !channel.manageable;
  } catch {
    // A cache discord.js cannot compute permissions from (a role missing): no verdict.
    return false;
  }
}
