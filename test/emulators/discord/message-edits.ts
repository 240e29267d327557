import { messageCreateEvent, mentionedIds, messageObject, type Json } from './payloads.js';
import type { Store } from './store.js';
import { allChannels, allUsers, type EmuChannel, type World } from './world.js';
import { SUPPRESS_EMBEDS } from './message-flags.js';

/**
 * Its author edits a stored message: content and mentions change, `edited_timestamp` is set.
 * Returns the MESSAGE_UPDATE data (the whole message, as Discord sends for an edit) and whether
 * it is exempt from the Message Content blanking (a DM, or the bot mentioned).
 */
export function editMessageInStore(store: Store, world: World, message: Json, content: string): { stored: Json; channel: EmuChannel; d: Json; exempt: boolean } {
  const channelId = String(message.channel_id);
  const stored = store.findMessage(channelId, String(message.id));
  if (!stored) throw new Error('editMessage: no such message (Discord edits only a message that exists)');
  const channel = allChannels(world).find((c) => c.id === channelId);
  const author = allUsers(world).find((u) => u.id === stored.author?.id);
  if (!channel || !author || author.id === world.bot.id) throw new Error('editMessage: a user edits their own message in a known channel');
  // Discord's threads topic: "Users cannot edit messages ... in archived threads" (a post unarchives one first).
  if (channel.archived) throw new Error('editMessage: Discord refuses an edit in an archived thread (unarchive it first)');
  const ids = mentionedIds(content);
  const mentions = allUsers(world).filter((u) => ids.includes(u.id));
  const edited = messageObject({ id: stored.id, channel, author, content, world, mentions, mentionEveryone: /@(everyone|here)/.test(content) });
  // Each edit's time is after the one before (Discord's edits of a message are never at one instant).
  const before = typeof stored.edited_timestamp === 'string' ? Date.parse(stored.edited_timestamp) : 0;
  const editedAt = new Date(Math.max(Date.now(), before + 1)).toISOString();
  Object.assign(stored, { content, mentions: edited.mentions, mention_everyone: edited.mention_everyone, edited_timestamp: editedAt });
  const exempt = channel.guildId === undefined || mentions.some((u) => u.id === world.bot.id);
  return { stored, channel, d: messageCreateEvent(stored, channel, author), exempt };
}

/**
 * Discord unfurls a link of a stored message: its `embeds` change. Returns the MESSAGE_UPDATE
 * data: the whole message, as Discord sends for every update (its content and `edited_timestamp`
 * unchanged: null unless its author edited it), and whether it is exempt from the Message
 * Content blanking (a DM, or the bot mentioned).
 */
export function unfurlInStore(store: Store, world: World, message: Json, embeds: Json[]): { channel: EmuChannel; d: Json; exempt: boolean } {
  const channelId = String(message.channel_id);
  const stored = store.findMessage(channelId, String(message.id));
  if (!stored) throw new Error('unfurl: no such message');
  // Discord builds no preview for a message sent with SUPPRESS_EMBEDS: its links are never fetched.
  if ((Number(stored.flags ?? 0) & SUPPRESS_EMBEDS) !== 0) throw new Error('unfurl: the message was sent with SUPPRESS_EMBEDS, which Discord never unfurls');
  const channel = allChannels(world).find((c) => c.id === channelId);
  const author = allUsers(world).find((u) => u.id === stored.author?.id);
  if (!channel || !author) throw new Error('unfurl: a message of a known author in a known channel');
  stored.embeds = embeds;
  const mentions = (stored.mentions ?? []) as Json[];
  const exempt = channel.guildId === undefined || author.id === world.bot.id || mentions.some((u) => u.id === world.bot.id);
  return { channel, d: messageCreateEvent(stored, channel, author), exempt };
}
