import type { WebClient } from '@slack/web-api';
import { PlatformError } from '../../src/core/errors.js';
import { toPlatformError } from './errors.js';
import type { GoneNews } from './gone-cache.js';
import { GONE_WORDS, type GoneChannels, type GoneCode } from './gone-channels.js';

/** Refusals that say the bot cannot post in that channel any more (removed, archived, deleted). */
const CHANNEL_GONE: ReadonlySet<string> = new Set(['not_in_channel', 'channel_not_found', 'is_archived']);
/** How long `conversations.info` saying a marked channel is gone is taken at its word. */
const GONE_RECHECK_MS = 10_000;
/** Channels remembered at most (the oldest forgotten first). */
const MAX_CHANNELS = 1_000;

/**
 * What Slack's refusals of earlier posts say about the next one, asked right before a (billed)
 * agent call (ReplyPort.ready): a refused bot token (revoked, app uninstalled, bot deactivated)
 * is taken at its word for `tokenRecheckMs`, then `auth.test` is asked again; a channel the bot
 * was removed from, or that was archived or deleted, is asked about (`conversations.info`) for
 * each later message there until the bot is back; so is one the ingress heard went away (Slack's
 * event, gone-channels.ts). A refusal is forgotten when a mark or clear of its channel is
 * announced after it (Slack's later event says more). Nothing is asked unless Slack refused or said so first. A check Slack
 * does not answer (rate limited, a missing scope) lets the message go on, unless Slack's event said.
 */
export class PostReadiness {
  private refusedToken: { at: number; error: PlatformError } | undefined;
  /** Each refusal with the point in the gone marks' news it was met at (see `standing`). */
  private readonly refusedChannels = new Map<string, { error: PlatformError; news: number }>();
  /** When `conversations.info` last said a channel is still gone. */
  private readonly confirmedAt = new Map<string, number>();

  constructor(
    private readonly client: WebClient,
    private readonly tokenRecheckMs: number,
    /** Channels the ingress heard went away (channel-life.ts): checked as a refusal would be. Cached (gone-cache.ts): no Redis round trip per message. */
    private readonly gone?: GoneChannels & GoneNews,
    private readonly goneRecheckMs = GONE_RECHECK_MS,
  ) {}

  /** A post (or another call) was refused with `e`. */
  refused(channel: string, e: PlatformError): void {
    if (e.kind === 'unauthorized') this.refusedToken = { at: Date.now(), error: e };
    else if (e.kind === 'refused' && e.code !== undefined && CHANNEL_GONE.has(e.code)) {
      this.refusedChannels.delete(channel);
      if (this.refusedChannels.size >= MAX_CHANNELS) this.refusedChannels.delete(this.refusedChannels.keys().next().value!);
      this.refusedChannels.set(channel, { error: e, news: this.gone?.news() ?? 0 });
    }
  }

  /** What Slack refused in this channel (`is_archived`, ...) if no check since said it is back (no call made). */
  refusedIn(channel: string): string | undefined {
    return this.standing(channel)?.code;
  }

  /**
   * The refusal remembered for `channel`, unless a mark or clear of it was announced since:
   * Slack's later event speaks for the channel then (its mark, or none: unarchived, the bot
   * invited back), so the first message after it gets its working reaction before any check.
   */
  private standing(channel: string): PlatformError | undefined {
    const refusal = this.refusedChannels.get(channel);
    if (!refusal) return undefined;
    if (!this.gone?.heardSince(channel, refusal.news)) return refusal.error;
    this.refusedChannels.delete(channel);
    return undefined;
  }

  /** The same, or what the ingress heard (the worker's cache of the marks, no Slack call): for the working signal. */
  async heardGone(channel: string): Promise<string | undefined> {
    return this.refusedIn(channel) ?? (await this.gone?.get(channel).catch(() => undefined));
  }

  /**
   * Throws the refusal a post in `channel` would meet, if Slack said so and still says so. A
   * channel the ingress heard went away (its mark in Redis) is asked about at most once per
   * `goneRecheckMs` (a backlog there would otherwise spend Slack's `conversations.info` limit,
   * one call per message), and when Slack does not answer the check the mark is taken at its
   * word: it is Slack's own event, undone only by the event that undoes it or a check.
   */
  async check(channel: string): Promise<void> {
    await this.checkToken();
    const code = await this.gone?.get(channel).catch(() => undefined);
    const refusal = this.standing(channel) ?? (code ? this.fromMark(channel, code) : undefined);
    if (!refusal) return;
    const confirmed = this.confirmedAt.get(channel);
    if (code && confirmed !== undefined && Date.now() - confirmed < this.goneRecheckMs) throw refusal;
    let seen: { is_member?: boolean; is_archived?: boolean } | undefined;
    try {
      seen = (await this.client.conversations.info({ channel })).channel as typeof seen;
    } catch (err) {
      if (toPlatformError('conversations.info', err).code === 'channel_not_found') throw this.confirmed(channel, refusal);
      if (code) throw refusal;
      return;
    }
    if (seen?.is_archived === true || seen?.is_member === false) throw this.confirmed(channel, refusal);
    this.refusedChannels.delete(channel);
    this.confirmedAt.delete(channel);
    await this.gone?.clear(channel).catch(() => {});
  }

  private confirmed(channel: string, refusal: PlatformError): PlatformError {
    this.confirmedAt.delete(channel);
    if (this.confirmedAt.size >= MAX_CHANNELS) this.confirmedAt.delete(this.confirmedAt.keys().next().value!);
    this.confirmedAt.set(channel, Date.now());
    return refusal;
  }

  /**
   * The refusal a post would meet in a channel the ingress heard went away, remembered here as
   * one Slack gave (so the notice and the reactions are not tried there either). A mark Redis
   * cannot read lets the message go on, as an unanswered check does.
   */
  private fromMark(channel: string, code: GoneCode): PlatformError {
    const refusal = new PlatformError('slack', 'refused', `Slack said ${GONE_WORDS[code]} (${code}): not asking the agent for a reply that cannot be posted`, { code });
    this.refused(channel, refusal);
    return refusal;
  }

  private async checkToken(): Promise<void> {
    const refused = this.refusedToken;
    if (!refused) return;
    if (Date.now() - refused.at < this.tokenRecheckMs) throw refused.error;
    try {
      await this.client.auth.test();
      this.refusedToken = undefined;
    } catch (err) {
      const e = toPlatformError('auth.test', err);
      if (e.kind !== 'unauthorized') return;
      this.refusedToken = { at: Date.now(), error: e };
      throw e;
    }
  }
}
