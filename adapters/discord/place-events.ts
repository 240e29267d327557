import type { Client } from 'discord.js';
import type { AdapterContext } from '../../src/core/platform-context.js';
import type { ConversationRef } from '../../src/core/conversation.js';
import type { ChangeTiming } from '../../src/queue/early-change.js';
import { errorFields } from '../../src/logger.js';
import { discordChangeTiming } from './change-timing.js';
import { ASK_PREFIX, askTargetOf } from './commands/ask-agent.js';
import type { RawPacket } from './gateway-sessions.js';
import type { GonePlaces } from './gone-places.js';
import type { KeyedSerial } from './serial.js';

export interface PlaceEventsOptions {
  ctx: Pick<AdapterContext, 'bindings' | 'logger' | 'audit' | 'dropQueuedWork' | 'withdrawMessage' | 'queuedIdsStartingWith'>;
  gone: GonePlaces;
  /** The per-channel order MESSAGE_CREATE is handled in: a deletion is handled after its create. */
  serial: KeyedSerial;
}

interface PlaceData {
  id?: string;
  ids?: string[];
  channel_id?: string;
  guild_id?: string;
  parent_id?: string | null;
  unavailable?: boolean;
  channels?: Array<{ id: string }>;
  thread_metadata?: { archived?: boolean; locked?: boolean };
  threads?: Array<{ id: string }>;
}

/**
 * What the gateway says about where replies go, read from raw packets (discord.js drops a
 * MESSAGE_DELETE of an uncached message, and has forgotten a deleted guild's channels by the time
 * its own events fire):
 * - MESSAGE_DELETE(_BULK): the question is withdrawn, so the agent is not asked it (as Slack's
 *   `message_deleted`), and so is every "Ask the agent" about it still waiting (its author may
 *   have deleted it for what it held); an answer already under way still goes out, as a plain message.
 *   One not stored yet, sent a moment ago, is withdrawn as it is stored (change-timing.ts).
 * - CHANNEL_DELETE, THREAD_DELETE: the place is marked gone for every worker (no billed call for
 *   what is queued there) and a deleted channel's binding is removed: Discord never reuses its ID.
 * - GUILD_DELETE without `unavailable` (the bot was removed, or the server deleted): as Slack's
 *   uninstall, the server's bindings and queued work are removed, its channels marked gone.
 * - THREAD_UPDATE: a thread locked and archived, where the bot may not manage threads, takes no
 *   post: what is queued there is not sent (for a while: see gone-places.ts); unlocked, it is.
 * - GUILD_CREATE: the bot is in the server (again): channels marked when it left are usable.
 */
export function createPlaceEvents(options: PlaceEventsOptions): (packet: RawPacket, client: Client) => void {
  const { ctx, gone, serial } = options;
  const logger = ctx.logger;
  const failed = (what: string) => (err: unknown) => logger.warn({ ...errorFields(err) }, `discord: could not ${what}`);

  async function withdraw(client: Client, d: PlaceData, ids: string[]): Promise<void> {
    if (!ctx.withdrawMessage || !d.channel_id) return;
    const channel = client.channels.cache.get(d.channel_id);
    const parentId = channel?.isThread() ? channel.parentId : undefined;
    const conversation: ConversationRef = {
      platform: 'discord',
      workspaceId: d.guild_id ?? 'dm',
      channelId: parentId ?? d.channel_id,
      ...(parentId ? { threadId: d.channel_id } : {}),
    };
    const withdrawOne = async (messageId: string, timing?: ChangeTiming) => {
      const outcome = await ctx.withdrawMessage!(conversation, messageId, timing);
      if (outcome === 'absent' || outcome === 'answered') return;
      logger.info(
        { messageId, channelId: d.channel_id, guildId: d.guild_id, outcome },
        outcome === 'withdrawn'
          ? 'discord: a message was deleted before it was answered: the agent will not be asked it'
          : outcome === 'kept'
            ? 'discord: a message was deleted before it was stored: the agent will not be asked it'
            : 'discord: a message was deleted while the agent worked on it: its answer is posted as a plain message, not asked again',
      );
    };
    // With its time (its ID's): a deletion that comes before its message is stored (after a
    // hand-over, the question may still be on its way in the catch-up's replay) is kept.
    for (const messageId of ids) await withdrawOne(messageId, discordChangeTiming(messageId));
    // Then the asks about them (stored already, or never: an ask is queued by the bridge itself).
    // A failed lookup does not keep the messages themselves from the agent.
    for (const messageId of await asksAbout(conversation, ids)) await withdrawOne(messageId);
  }

  /** The "Ask the agent" questions about these messages still queued (one scan of the conversation's records). */
  async function asksAbout(conversation: ConversationRef, ids: string[]): Promise<string[]> {
    if (!ctx.queuedIdsStartingWith || ids.length === 0) return [];
    const deleted = new Set(ids);
    const asks = await ctx.queuedIdsStartingWith(conversation, ASK_PREFIX);
    return asks.filter((id) => deleted.has(askTargetOf(id) ?? ''));
  }

  async function channelDeleted(client: Client, d: PlaceData, thread: boolean): Promise<void> {
    const id = d.id!;
    // A channel's threads go with it (Discord sends no THREAD_DELETE for them).
    const threads = thread ? [] : [...client.channels.cache.values()].filter((c) => c.isThread() && c.parentId === id).map((c) => c.id);
    await gone.mark([id, ...threads], 'was deleted');
    const unbound = !thread && (await ctx.bindings.remove('discord', id)) !== undefined;
    logger.info(
      { channelId: id, guildId: d.guild_id, threads: threads.length, unbound },
      `discord: ${thread ? 'a thread' : 'a channel'} was deleted: messages queued there are not sent to the agent${unbound ? ', and its binding was removed' : ''}`,
    );
    if (unbound) {
      await ctx.audit?.record({ action: 'unbind', actor: 'discord', platform: 'discord', workspaceId: d.guild_id ?? '', channelId: id, detail: 'channel deleted', outcome: 'ok' });
    }
  }

  async function guildLeft(guildId: string, channelIds: string[]): Promise<void> {
    await gone.leftGuild(guildId, channelIds);
    let unbound = 0;
    for (const id of channelIds) if (await ctx.bindings.remove('discord', id)) unbound += 1;
    const dropped = (await ctx.dropQueuedWork?.('discord', guildId)) ?? 0;
    logger.warn(
      { guildId, unbound, dropped },
      'discord: the bot was removed from a server (or the server was deleted): its bindings and queued messages were removed; add the bot again and bind its channels to use it there',
    );
    await ctx.audit?.record({
      action: 'uninstall',
      actor: 'discord',
      platform: 'discord',
      workspaceId: guildId,
      channelId: '*',
      detail: `bot removed from the server: ${unbound} binding(s) and ${dropped} queued message(s) removed`,
      outcome: 'ok',
    });
  }

  return function onPacket(packet: RawPacket, client: Client): void {
    const d = (packet.d ?? {}) as PlaceData;
    switch (packet.t) {
      case 'MESSAGE_DELETE':
      case 'MESSAGE_DELETE_BULK': {
        const ids = packet.t === 'MESSAGE_DELETE' ? (d.id ? [d.id] : []) : (d.ids ?? []);
        if (d.channel_id) void serial.run(d.channel_id, () => withdraw(client, d, ids)).catch(failed('withdraw a deleted message: it may still be answered'));
        return;
      }
      case 'CHANNEL_DELETE':
      case 'THREAD_DELETE':
        if (d.id) void channelDeleted(client, d, packet.t === 'THREAD_DELETE').catch(failed('record a deleted channel'));
        return;
      case 'GUILD_DELETE': {
        if (!d.id || d.unavailable === true) return;
        // Raw packets come before discord.js drops the guild from its cache: its channels are still known.
        const guild = client.guilds.cache.get(d.id);
        const channelIds = guild ? [...guild.channels.cache.keys()] : [];
        void guildLeft(d.id, channelIds).catch(failed('record leaving a server'));
        return;
      }
      case 'THREAD_UPDATE': {
        if (!d.id) return;
        const cached = client.channels.cache.get(d.id);
        const closed = d.thread_metadata?.archived === true && d.thread_metadata.locked === true && !(cached?.isThread() && cached.manageable);
        void gone.threadClosed(d.id, closed).catch(failed('record a locked thread'));
        return;
      }
      case 'GUILD_CREATE':
        if (d.id) void gone.inGuild(d.id, [...(d.channels ?? []), ...(d.threads ?? [])].map((c) => c.id)).catch(failed('record a server the bot is in'));
        return;
      default:
    }
  };
}
