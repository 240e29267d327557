/** What a test gives the Discord emulator: its options, and a user's message and attachments. */
import type { EmuChannel, EmuUser } from './world.js';

export interface DiscordEmulatorOptions {
  /** @defaultValue 'emulator-bot-token' */
  token?: string;
  /** When false, IDENTIFY with the MessageContent intent is closed with 4014. @defaultValue true */
  allowMessageContent?: boolean;
  /** @defaultValue 41250 (Discord's usual value) */
  heartbeatIntervalMs?: number;
  /**
   * How long a session whose connection dropped stays resumable (Discord publishes no figure;
   * a few minutes in practice). @defaultValue 120000
   */
  resumeWindowMs?: number;
  /** Guilds beyond the main one (one text channel each), spread over shards. @defaultValue 0 */
  extraGuilds?: number;
  /**
   * Permissions of @everyone and of the bot's role, as a decimal string: a guild set up sloppily
   * (e.g. '0'). @defaultValue View Channel, Send Messages (in Threads), Read Message History
   */
  rolePermissions?: string;
  /** `shards` that `GET /gateway/bot` recommends. @defaultValue 1 */
  recommendedShards?: number;
  /** `session_start_limit.max_concurrency` of `GET /gateway/bot`. @defaultValue 1 */
  maxConcurrency?: number;
  /**
   * How long one rate-limit key (`shard_id % max_concurrency`) must wait between IDENTIFYs; an
   * earlier one gets op 9 (`d: false`), as on Discord. @defaultValue 5000
   */
  identifyWindowMs?: number;
  /**
   * Session starts left (`session_start_limit.remaining`, one used per accepted IDENTIFY) and ms
   * until Discord resets the daily count (`reset_after`). @defaultValue { remaining: 999, resetAfterMs: 0 }
   */
  sessionStartLimit?: { remaining?: number; resetAfterMs?: number };
  /**
   * How long a create with `enforce_nonce` and a nonce already used in the channel returns the
   * earlier message instead of posting (Discord: "the past few minutes"); `setNonceWindow`
   * changes it while the emulator runs. @defaultValue 120000
   */
  nonceWindowMs?: number;
  /**
   * How long after an interaction is sent its first answer (callback) is accepted; later ones get
   * 404 with code 10062 (Unknown interaction), as on Discord, whose user then reads "The
   * application did not respond". @defaultValue 3000
   */
  interactionAckMs?: number;
  /** How long its token takes edits and follow-ups (401, code 50027, after). @defaultValue 900000 (15 minutes) */
  interactionTokenMs?: number;
}

/** A file attached to a user's message; the emulator serves it over HTTP at the attachment's `url`. */
export interface AttachmentInput {
  filename: string;
  content: string | Buffer;
  /** Omitted from the attachment object when null. @defaultValue 'text/plain; charset=utf-8' */
  contentType?: string | null;
  /** Overrides the `size` Discord reports (to test limits without large bodies). */
  size?: number;
}

export interface SendMessageInput {
  author: EmuUser;
  channel: EmuChannel;
  content: string;
  /** Reply to this message (in the same channel). */
  replyTo?: string;
  /** A reply pings the replied-to author unless this is false (Discord's client default: ping). */
  pingReply?: boolean;
  /** A count of small placeholder text files, or the files themselves. */
  attachments?: number | AttachmentInput[];
  /** Message type (0 default, 19 reply, 7 member join…); derived when absent. */
  type?: number;
  /** Embeds (API shape); a person's client sends none, a bot's or webhook's may send only these. */
  embeds?: Array<Record<string, unknown>>;
  /** A poll (`question` and `answers` texts): Discord sends the message with no content. */
  poll?: { question: string; answers: string[] };
  /**
   * Forwards this message (any channel): Discord sends a message of its own with
   * `message_reference.type` 1 and the original's content in `message_snapshots` (no author).
   */
  forward?: Record<string, any>;
}
