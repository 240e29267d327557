/**
 * A local Discord for end-to-end tests: REST (node:http) and a gateway WebSocket on one port.
 * Point discord.js at it with `rest: { api: emulator.apiUrl }`; the gateway URL comes from
 * `GET /gateway/bot`. Users act through `sendMessage`, `runCommand`, `autocomplete`, `submitModal`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Gateway } from './gateway.js';
import { GatewayControls } from './gateway-controls.js';
import { INTENTS } from './gateway-rules.js';
import type { GatewayStats } from './gateway-stats.js';
import { RestApi, type GatewayInfo } from './rest.js';
import { Store, type EmuInteraction, type Fault, type RestCall } from './store.js';
import { HAS_SNAPSHOT, channelObject, guildCreate, mentionedIds, messageCreateEvent, messageObject, pollObject, snapshotOf, type Json } from './payloads.js';
import {
  autocompleteInteraction,
  commandInteraction,
  componentInteraction,
  messageCommandInteraction,
  modalSubmitInteraction,
  type InteractionBase,
} from './interaction-payloads.js';
import type { AttachmentInput, DiscordEmulatorOptions, SendMessageInput } from './options.js';
import { attachmentObjects, serveAttachment } from './attachments.js';
import { editMessageInStore, unfurlInStore } from './message-edits.js';
import { CHANNEL_TYPES, allUsers, createWorld, isThread, snowflake, type EmuChannel, type EmuUser, type World } from './world.js';

/** Where the emulator serves attachment bytes (outside /api, as Discord's CDN is). */
const ATTACHMENTS_PATH = '/attachments/';

export type { EmuInteraction, RestCall, Fault, EmuChannel, EmuUser, World, Json, GatewayStats };
export type { DiscordEmulatorOptions, AttachmentInput, SendMessageInput };

export class DiscordEmulator extends GatewayControls {
  readonly world: World;
  readonly store = new Store();
  private currentToken: string;
  private readonly server: Server;
  protected readonly gateway: Gateway;
  private readonly rest: RestApi;
  protected readonly gatewayInfo: GatewayInfo;
  private port = 0;

  constructor(options: DiscordEmulatorOptions = {}) {
    super();
    this.setMaxListeners(100);
    this.world = createWorld({ extraGuilds: options.extraGuilds, rolePermissions: options.rolePermissions });
    this.currentToken = options.token ?? 'emulator-bot-token';
    this.server = createServer((req, res) => {
      if (req.url?.startsWith(ATTACHMENTS_PATH)) return serveAttachment(this.store, req.url.slice(ATTACHMENTS_PATH.length), req.url, req.headers, res, () => this.emit('change'));
      this.rest.handle(req, res).catch((e: unknown) => {
        res.writeHead(500).end(String(e));
      });
    });
    this.gateway = new Gateway(
      this.server,
      this.world,
      {
        token: this.currentToken,
        allowMessageContent: options.allowMessageContent ?? true,
        heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
        resumeWindowMs: options.resumeWindowMs ?? 120_000,
        onIdentify: () => {
          const limit = this.gatewayInfo.sessionStartLimit;
          limit.remaining = Math.max(0, limit.remaining - 1);
        },
        maxConcurrency: () => this.gatewayInfo.maxConcurrency,
        ...(options.identifyWindowMs !== undefined ? { identifyWindowMs: options.identifyWindowMs } : {}),
      },
      () => this.wsUrl,
      () => this.emit('change'),
    );
    this.gatewayInfo = {
      shards: options.recommendedShards ?? 1,
      maxConcurrency: options.maxConcurrency ?? 1,
      sessionStartLimit: { total: 1000, remaining: options.sessionStartLimit?.remaining ?? 999, resetAfterMs: options.sessionStartLimit?.resetAfterMs ?? 0 },
      nonceWindowMs: options.nonceWindowMs ?? 120_000,
      interactionAckMs: options.interactionAckMs ?? 3_000,
      interactionTokenMs: options.interactionTokenMs ?? 15 * 60_000,
    };
    this.rest = new RestApi(this.world, this.store, () => this.currentToken, () => this.wsUrl, this.gatewayInfo, {
      botMessage: (channel, message) => {
        this.store.addMessage(channel.id, message);
        this.dispatchMessage(channel, this.world.bot, message, true);
      },
      changed: () => this.emit('change'),
      messageContentAllowed: () => this.gateway.messageContentAllowed,
      threadUpdated: (thread) => this.gateway.dispatch('THREAD_UPDATE', channelObject(thread, this.world), { intent: INTENTS.Guilds }, thread.guildId),
      bulkDeleted: (ch, ids) => this.gateway.dispatch('MESSAGE_DELETE_BULK', { ids, channel_id: ch.id, guild_id: ch.guildId }, { intent: INTENTS.GuildMessages }, ch.guildId),
    });
  }

  /** The bot token Discord accepts now (see {@link resetToken}). */
  get token(): string {
    return this.currentToken;
  }

  /**
   * The developer resets the bot token in the portal: from now on only `token` is accepted
   * (REST answers 401, code 0, to the old one; IDENTIFY and RESUME with it are closed with 4004),
   * and the connections made with the old one are cut.
   */
  resetToken(token: string): void {
    this.currentToken = token;
    this.gateway.setToken(token);
    this.gateway.drop();
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** For `DISCORD_API_URL` / `rest.api`: no version (the client appends /v10). */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  get calls(): RestCall[] {
    return this.store.calls;
  }

  /** A user posts a message; Discord fills `mentions` and `referenced_message` and dispatches MESSAGE_CREATE. */
  sendMessage(input: SendMessageInput): Json {
    const referenced = input.replyTo ? this.store.findMessage(input.channel.id, input.replyTo) : undefined;
    const pingReply = input.pingReply ?? true;
    const ids = mentionedIds(input.content);
    const mentions = allUsers(this.world).filter(
      (u) => ids.includes(u.id) || (pingReply && referenced !== undefined && u.id === referenced.author?.id),
    );
    const message = messageObject({
      id: snowflake(),
      channel: input.channel,
      author: input.author,
      content: input.content,
      world: this.world,
      mentions,
      mentionEveryone: /@(everyone|here)/.test(input.content),
      type: input.type,
      ...(input.embeds ? { embeds: input.embeds } : {}),
      ...(input.poll ? { poll: pollObject(input.poll) } : {}),
      ...(input.replyTo
        ? { reference: { type: 0, message_id: input.replyTo, channel_id: input.channel.id, guild_id: input.channel.guildId }, referenced: referenced ?? null }
        : {}),
      ...(input.forward
        ? {
            reference: { type: 1, message_id: input.forward.id, channel_id: input.forward.channel_id, ...(input.forward.guild_id ? { guild_id: input.forward.guild_id } : {}) },
            snapshots: [snapshotOf(input.forward)],
            flags: HAS_SNAPSHOT,
          }
        : {}),
      attachments: attachmentObjects(this.store, this.attachmentsUrl, input),
    });
    this.store.addMessage(input.channel.id, message);
    this.dispatchMessage(input.channel, input.author, message, mentions.some((u) => u.id === this.world.bot.id));
    return message;
  }

  /** Dispatches MESSAGE_CREATE again for a message already sent (a duplicate delivery). */
  redeliver(message: Json): void {
    const channel = Object.values(this.world.channels).find((c) => c.id === message.channel_id) as EmuChannel | undefined;
    const author = allUsers(this.world).find((u) => u.id === message.author?.id);
    if (!channel || !author) throw new Error('redeliver: unknown channel or author');
    const mentionsBot = (message.mentions as Json[]).some((u) => u.id === this.world.bot.id);
    this.dispatchMessage(channel, author, message, mentionsBot);
  }

  /**
   * Dispatches INTERACTION_CREATE again for an interaction already sent, as a second session of
   * the same shard (another process running it, a deploy overlap) receives it too on Discord.
   */
  redeliverInteraction(interaction: EmuInteraction): void {
    this.gateway.dispatch('INTERACTION_CREATE', interaction.payload, undefined, interaction.payload.guild_id as string | undefined);
  }

  /** A user picks a message command (context menu, type 3) such as "Ask the agent" on a message. */
  runMessageCommand(input: InteractionBase & { target: Json; name?: string }): EmuInteraction {
    const name = input.name ?? 'Ask the agent';
    return this.interact(messageCommandInteraction(this.world, { ...input, name, commandId: this.commandId(name) }));
  }

  /** A user clicks a button (by `custom_id`) on a message the bot posted. */
  clickButton(input: InteractionBase & { message: Json; customId: string }): EmuInteraction {
    const ids = (input.message.components as Json[] | undefined)?.flatMap((row) => (row.components as Json[] | undefined) ?? []).map((c) => c.custom_id);
    if (!ids?.includes(input.customId)) throw new Error(`clickButton: the message has no button ${input.customId}`);
    return this.interact(componentInteraction(this.world, input));
  }

  runCommand(input: InteractionBase & { subcommand: string; options?: Record<string, string> }): EmuInteraction {
    return this.interact(commandInteraction(this.world, { ...input, commandId: this.commandId() }));
  }

  autocomplete(input: InteractionBase & { subcommand: string; focused: string; options: Record<string, string> }): EmuInteraction {
    return this.interact(autocompleteInteraction(this.world, { ...input, commandId: this.commandId() }));
  }

  submitModal(input: InteractionBase & { customId: string; fields: Record<string, string> }): EmuInteraction {
    return this.interact(modalSubmitInteraction(this.world, input));
  }

  /** Turns on Discord's per-channel bucket for message creates (real Discord: 5 per 5 s), with 429s and headers. */
  rateLimitMessageCreates(limit = 5, windowMs = 5_000): void {
    this.store.messageCreateBucket = { limit, windowMs, windows: new Map() };
  }

  /**
   * A user starts a thread in `parent`. Discord announces it with THREAD_CREATE (`newly_created`)
   * to bots with the Guilds intent; `announce: false` leaves that out, as when the event was
   * missed, so the first the bot hears of the thread is a message in it.
   *
   * `from`: the thread is started from that message of `parent`, as Discord does it: the thread
   * takes the message's ID, and its first message is a THREAD_STARTER_MESSAGE (type 21, no
   * content) whose `referenced_message` is that message.
   * `private`: a private thread (type 12, from no message) the bot was added to (THREAD_CREATE).
   */
  createThread(parent: EmuChannel, name: string, options: { announce?: boolean; from?: Json; private?: boolean } = {}): EmuChannel {
    const from = options.from;
    if (from && options.private) throw new Error('createThread: Discord starts a private thread from no message');
    const id = from ? String(from.id) : snowflake();
    const type = options.private ? CHANNEL_TYPES.PrivateThread : CHANNEL_TYPES.PublicThread;
    const thread: EmuChannel = { id, type, name, guildId: parent.guildId, parentId: parent.id };
    this.world.laterThreads.push(thread);
    if (from) {
      const author = allUsers(this.world).find((u) => u.id === from.author?.id) ?? this.world.users.alice;
      const reference = { type: 0, message_id: from.id, channel_id: parent.id, guild_id: parent.guildId };
      this.store.addMessage(thread.id, messageObject({ id, channel: thread, author, content: '', world: this.world, mentions: [], type: 21, reference, referenced: from }));
    }
    if (options.announce !== false) {
      this.gateway.dispatch('THREAD_CREATE', { ...channelObject(thread, this.world), newly_created: true }, { intent: INTENTS.Guilds }, parent.guildId);
    }
    return thread;
  }

  /**
   * An admin changes the channel's overwrites so the bot's role may (not) post there: posts and
   * typing answer 403 (50013) in it and its threads, CHANNEL_UPDATE tells the gateway, and
   * interactions there carry `app_permissions` without Send Messages (and in Threads).
   */
  setBotMayPost(channel: EmuChannel, may: boolean): void {
    channel.botMayNotPost = !may;
    this.gateway.dispatch('CHANNEL_UPDATE', channelObject(channel, this.world), { intent: INTENTS.Guilds }, channel.guildId);
  }

  /**
   * Whether the bot may add reactions in the channel (Add Reactions and Read Message History):
   * when not, `PUT …/reactions/{emoji}/@me` answers 403 (50013) as Discord does.
   */
  setBotMayReact(channel: EmuChannel, may: boolean): void {
    channel.botMayNotReact = !may;
  }

  /**
   * Someone deletes a message: it is gone from the channel (a reply to it is refused with 50035
   * unless `fail_if_not_exists: false`), and MESSAGE_DELETE is dispatched.
   */
  deleteMessage(message: Json): void {
    const channelId = String(message.channel_id);
    this.store.deleteMessage(channelId, String(message.id));
    const guildId = message.guild_id as string | undefined;
    const d = { id: message.id, channel_id: channelId, ...(guildId ? { guild_id: guildId } : {}) };
    this.gateway.dispatch('MESSAGE_DELETE', d, { intent: guildId ? INTENTS.GuildMessages : INTENTS.DirectMessages }, guildId);
  }

  /**
   * Its author edits a message: its content (and mentions) change, `edited_timestamp` is set,
   * and MESSAGE_UPDATE is dispatched with the whole message, as Discord does for an edit
   * (content blanked without the Message Content intent unless the bot is mentioned, or a DM);
   * throws in an archived thread, where Discord allows no edit.
   */
  editMessage(message: Json, content: string): Json {
    const { stored, channel, d, exempt } = editMessageInStore(this.store, this.world, message, content);
    const isDm = channel.guildId === undefined;
    this.dispatchEdit('MESSAGE_UPDATE', d, { intent: isDm ? INTENTS.DirectMessages : INTENTS.GuildMessages, messageContent: 'blank-unless-exempt', exempt }, channel.guildId);
    this.emit('change');
    return stored;
  }

  /**
   * Discord unfurls a link of a message: MESSAGE_UPDATE with the whole message, its new `embeds`
   * and its `edited_timestamp` as it was (null unless its author edited it): not an edit. Content
   * blanked without the Message Content intent, as for any message event.
   */
  unfurl(message: Json, embeds: Json[]): void {
    const { channel, d, exempt } = unfurlInStore(this.store, this.world, message, embeds);
    const isDm = channel.guildId === undefined;
    this.gateway.dispatch('MESSAGE_UPDATE', d, { intent: isDm ? INTENTS.DirectMessages : INTENTS.GuildMessages, messageContent: 'blank-unless-exempt', exempt }, channel.guildId);
  }

  /**
   * An admin deletes a channel (with its threads) or a thread: requests there answer 404 (10003)
   * from now on, and CHANNEL_DELETE or THREAD_DELETE is dispatched.
   */
  deleteChannel(channel: EmuChannel): void {
    this.store.deletedChannels.add(channel.id);
    const thread = isThread(channel);
    const d = thread ? { id: channel.id, type: channel.type, guild_id: channel.guildId, parent_id: channel.parentId } : channelObject(channel, this.world);
    this.gateway.dispatch(thread ? 'THREAD_DELETE' : 'CHANNEL_DELETE', d, { intent: INTENTS.Guilds }, channel.guildId);
  }

  /**
   * A thread is archived (or unarchived), and maybe locked: THREAD_UPDATE is dispatched. A post
   * into an archived thread unarchives it; into a locked archived one it is refused (50083).
   */
  setThreadArchived(thread: EmuChannel, state: { archived: boolean; locked?: boolean }): void {
    thread.archived = state.archived;
    thread.locked = state.locked ?? thread.locked;
    this.gateway.dispatch('THREAD_UPDATE', channelObject(thread, this.world), { intent: INTENTS.Guilds }, thread.guildId);
  }

  /**
   * An admin kicks the bot from a guild: GUILD_DELETE without `unavailable` (the guild is not in
   * an outage), and requests in the guild's channels answer 403 (50001) from now on.
   */
  removeBotFromGuild(guildId: string = this.world.guildId): void {
    this.world.leftGuilds.add(guildId);
    this.gateway.dispatch('GUILD_DELETE', { id: guildId }, { intent: INTENTS.Guilds }, guildId);
  }

  /** An admin adds the bot back to a guild it was removed from: GUILD_CREATE, and its channels answer again. */
  addBotToGuild(guildId: string): void {
    this.world.leftGuilds.delete(guildId);
    this.gateway.dispatch('GUILD_CREATE', guildCreate(this.world, guildId), { intent: INTENTS.Guilds }, guildId);
  }

  /** The next `count` message creates fail with this fault (429 with real rate-limit headers, or a 5xx). */
  failNextMessageCreates(count: number, fault: Fault = { status: 429, retryAfterSeconds: 0.5 }): void {
    for (let n = 0; n < count; n++) this.store.messageCreateFaults.push(fault);
  }

  /**
   * The next message create whose body matches `filter` is stored (and dispatched) as usual, but
   * its HTTP answer is never sent: a test kills the client in that window. `heldCreates` lists them.
   */
  holdNextMessageCreate(filter: (body: Json) => boolean = () => true): void {
    this.store.messageCreateHolds.push(filter);
  }

  /** The messages of the creates held so far (`holdNextMessageCreate`). */
  get heldCreates(): readonly Json[] {
    return this.store.heldCreates;
  }

  /** The next `count` command bulk overwrites (`PUT …/commands`) fail with this fault. */
  failNextCommandPuts(count: number, fault: Fault = { status: 429, retryAfterSeconds: 60 }): void {
    for (let n = 0; n < count; n++) this.store.commandPutFaults.push(fault);
  }

  /** Base URL of served attachments. */
  get attachmentsUrl(): string {
    return `http://127.0.0.1:${this.port}${ATTACHMENTS_PATH}`;
  }

  /** Messages the bot posted (optionally in one channel), oldest first. */
  botMessages(channelId?: string): Json[] {
    const lists = channelId ? [this.store.messages.get(channelId) ?? []] : [...this.store.messages.values()];
    return lists.flat().filter((m) => m.author?.id === this.world.bot.id);
  }

  /** Bot messages that reply to the given user message. */
  repliesTo(messageId: string): Json[] {
    return this.botMessages().filter((m) => m.message_reference?.message_id === messageId);
  }

  async close(): Promise<void> {
    await this.gateway.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private commandId(name = 'agent'): string {
    const cmds = this.store.commands.get(this.world.guildId) ?? this.store.commands.get('global') ?? [];
    return (cmds.find((c) => c.name === name)?.id as string | undefined) ?? '950000000000000001';
  }

  private interact(payload: Json): EmuInteraction {
    const interaction: EmuInteraction = { id: payload.id, token: payload.token, payload, responses: [], followups: [], createdAt: Date.now(), late: [] };
    this.store.interactions.set(interaction.id, interaction);
    this.gateway.dispatch('INTERACTION_CREATE', payload, undefined, payload.guild_id as string | undefined);
    return interaction;
  }

  private dispatchMessage(channel: EmuChannel, author: EmuUser, message: Json, mentionsBot: boolean): void {
    const isDm = channel.guildId === undefined;
    this.gateway.dispatch('MESSAGE_CREATE', messageCreateEvent(message, channel, author), {
      intent: isDm ? INTENTS.DirectMessages : INTENTS.GuildMessages,
      messageContent: 'blank-unless-exempt',
      exempt: isDm || mentionsBot || author.id === this.world.bot.id,
    }, channel.guildId);
    this.emit('change');
  }
}

export async function startDiscordEmulator(options: DiscordEmulatorOptions = {}): Promise<DiscordEmulator> {
  return new DiscordEmulator(options).listen();
}
