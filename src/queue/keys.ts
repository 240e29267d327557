import type { Platform } from '../core/conversation.js';
import { isDmBindingChannel } from '../bindings/dm.js';

/**
 * Every Redis key the bridge owns, in one place. All live under `<QUEUE_PREFIX>:chat`, beside
 * BullMQ's own keys for the `chat` queue (`<prefix>:chat:<jobId>`, `:wait`, `:active`...):
 * with Redis Cluster the prefix is a `{hash tag}` (src/redis.ts `bullPrefix`), so a mailbox
 * script may touch a conversation's keys, its channel's backlog and the job's BullMQ lock in
 * one call. Scripts get every key as a KEY, never build one from an argument, except the fetch
 * that acquires (fetch-acquire.lua): it learns the conversation only when BullMQ picks the job,
 * and gets each key as the text around the ID, made here (Mailbox.fetchAcquireArgs).
 *
 * The stores outside src/queue with one or two keys take them from here too (the failure log,
 * the drop log, suggested prompts, workspace accounts, credential fingerprints). Stores with a family of keys name them in
 * their own module under the same base: `bindings` (src/bindings), `{quota}:*` (src/quota),
 * `audit:*` (src/audit), `feedback:*` (src/feedback), `web:*` (adapters/web). Adapters build no
 * key of their own for de-duplication: they claim a message through the ingress's seen ledger.
 */
export function queueKeys(base: string) {
  const conversation = (conversationId: string) => `${base}:conv:${conversationId}`;
  const channelPending = (platform: Platform, channelId: string) => `${base}:chan:${platform}:${channelId}:pending`;
  return {
    base,
    /** List of a conversation's unfinished message IDs, oldest first. */
    mailbox: (conversationId: string) => `${conversation(conversationId)}:mbox`,
    /** String: the job ID that holds (drains) the conversation. */
    lease: (conversationId: string) => `${conversation(conversationId)}:lease`,
    /** Hash of a conversation's message records: `<id>` = payload, `<id>:<progress field>`. */
    messages: (conversationId: string) => `${conversation(conversationId)}:msgs`,
    /**
     * Hash, a few minutes' TTL: its sender's edit or deletion of a message that came before the
     * message was stored (Slack delivers events in no order), applied by the push that stores it
     * (src/queue/early-change.ts). Holds the edited text at most, never anything else.
     */
    earlyChange: (conversationId: string, messageId: string) => `${conversation(conversationId)}:early:${messageId}`,
    /** String: the bot answered in this conversation (follow-ups in a thread need no mention). */
    answered: (conversationId: string) => `${base}:answered:${conversationId}`,
    /**
     * String: how far this platform message got, the ingress's seen ledger
     * (src/ingress/seen-ledger.ts). `delivered`: an adapter claimed its first delivery (1 h, so
     * Slack's `app_mention` + `message` pair and redeliveries get one pass); `queued`: the
     * mailbox accepted it (seen TTL, 1 day), and a redelivery is a duplicate; `refused:<token>`:
     * the ingress gave up on it while Redis was away and told the user (refuse-unstored-1.lua),
     * so a push of it that runs late stores nothing.
     */
    seen: (platform: Platform, messageId: string) => `${base}:seen:${platform}:${messageId}`,
    /** Sorted set: a channel's unfinished message IDs by arrival, for fairness and its cap. */
    channelPending,
    /**
     * The backlog a message counts in (MAX_PENDING_PER_CHANNEL and fairness): its binding
     * channel's, except for direct messages, which all share one binding channel: each DM
     * channel has its own, so one person's flood of DMs never refuses or delays another's.
     */
    backlogOf: (m: { platform: Platform; channelId: string; reply: { channelId: string } }) =>
      channelPending(m.platform, isDmBindingChannel(m.channelId) ? `${m.channelId}:${m.reply.channelId}` : m.channelId),
    /** Sorted set: conversations with accepted messages that no job has taken yet, by time. */
    stranded: `${base}:stranded`,
    /** String: a refusal notice of this kind went to this user; no other until it expires. */
    noticeSent: (kind: string, platform: Platform, userId: string) => `${base}:notice:${kind}:${platform}:${userId}`,
    /** List: the most recent messages the bridge gave up on (src/diagnostics/failure-log.ts). */
    failures: `${base}:failures`,
    /** List: a channel's recent messages that got no answer, for `why` (src/diagnostics/drop-log.ts). */
    dropLog: (platform: Platform, channelId: string) => `${base}:why:${platform}:${encodeURIComponent(channelId)}`,
    /** Hash: Slack's suggested prompts per channel, field `<platform>:<channelId>` (src/prompts). */
    prompts: `${base}:prompts`,
    /**
     * Sorted set: fingerprints (keyed HMACs, never the value) of credential values admins
     * added, by when, for the answers' redaction (src/crypto/credential-fingerprints.ts).
     */
    credentialFingerprints: `${base}:credential-fingerprints`,
    /** String: a workspace's sealed agent account (src/accounts/account-store.ts). */
    account: (platform: Platform, workspaceId: string) => `${base}:account:${platform}:${workspaceId}`,
    /**
     * String, no TTL: set by every process at start and after each reconnect. Missing after a
     * reconnect means Redis came back without its data (src/redis-startup.ts `noteDataLoss`).
     */
    dataMark: `${base}:redis-data-mark`,
    /** BullMQ's lock of a job (value = the worker's token); read by the fenced scripts, never written. */
    jobLock: (jobId: string) => `${base}:${jobId}:lock`,
    /** BullMQ's set of jobs suspected stalled; a renewed lock takes its job out, as extendLock does. */
    stalled: `${base}:stalled`,
    /** BullMQ's active jobs: a job whose lock lapsed unseen is still its worker's while it is here (record-5.lua). */
    active: `${base}:active`,
    /** BullMQ's waiting and prioritized jobs: whether anyone is in line behind a job's turn. */
    wait: `${base}:wait`,
    prioritized: `${base}:prioritized`,
    /** BullMQ's priority counter (orders jobs of one priority by when they were added). */
    priorityCounter: `${base}:pc`,
  };
}

export type QueueKeys = ReturnType<typeof queueKeys>;
