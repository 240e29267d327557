import type { App } from '@slack/bolt';
import { errorFields } from '../../src/logger.js';
import type { IncomingMessage } from '../../src/core/message.js';
import type { ReplyPort } from '../../src/core/reply-port.js';
import type { BindingStore } from '../../src/bindings/types.js';
import type { Ingress, IngressResult } from '../../src/ingress/types.js';
import type { FirstDelivery, LeaseResult, SeenLease } from '../../src/ingress/seen-ledger.js';
import type { Logger } from '../../src/logger.js';
import type { SlackFileReader } from './files.js';
import { normaliseSlackEvent, type BotIdentity } from './normalise.js';
import { installationKey } from './installations.js';
import { filesOf } from './shown-text.js';
import { hasVisibleText } from '../../src/core/visible-text.js';
import { fittedText, ownWords, withFilesRead, withHeading } from '../../src/ingress/forwarded-fit.js';
import { ackHoldIn } from './ack-hold.js';
import { mentionsPeopleById, nameMentionedPeople } from './mention-names.js';
import type { UserDirectory } from './user-directory.js';

export interface MessageListenerDeps {
  ingress: Ingress;
  logger: Logger;
  identity(): Promise<BotIdentity>;
  /**
   * The ingress's seen ledger: Slack sends one message as `app_mention` and `message`, and
   * redelivers when an ack is late; only one delivery at a time gets past a claim (a short
   * lease, SeenLedger.lease), so the user gets at most one notice ("not bound", "over quota")
   * per message. A plain message's claim is the ingress's to take (see HandleOptions.claim).
   */
  seen: FirstDelivery;
  /** Reads `file_share` files into the message; without it files are left to the ingress's notice. */
  files?: SlackFileReader;
  /** For the one line naming the files that were not sent. */
  replyPort?: ReplyPort;
  /** Files are downloaded only for messages the bot may answer: a `mode all` binding answers every message. */
  bindings?: Pick<BindingStore, 'get'>;
  /** Names the people a message mentions (`<@U…>` carries only an ID) before the agent reads it. */
  users?: UserDirectory;
  /** "Add to Slack": the bot's identity comes from Bolt's context, and replies name their installation. */
  multiWorkspace?: boolean;
}

/** What Bolt's authorize put in the context (per installation with "Add to Slack"). */
export interface SlackEventContext {
  botUserId?: string;
  botId?: string;
  teamId?: string;
  enterpriseId?: string;
  isEnterpriseInstall?: boolean;
}

/** Changes a normalised message before the ingress sees it (assistant threads pick their binding). */
export type AdjustMessage = (message: IncomingMessage) => IncomingMessage | Promise<IncomingMessage>;

/** How long a delivery waits for another delivery of the same message to finish storing it. */
const OTHER_DELIVERY_WAIT_MS = 1_000;
/** How often it looks again at another process's lease meanwhile. */
const LEASE_POLL_MS = 100;

/**
 * `message` and `app_mention`: normalise, read attached text files, hand to the ingress, done.
 * Over HTTP, Slack's 200 waits (at most 2 s) until the ingress has decided; see ack-hold.ts.
 *
 * A claim taken before the message is stored (files to read, an assistant thread, a quota to
 * charge, a notice) is a short lease (SeenLedger.lease), so a delivery killed in between leaves
 * nothing that outlives it by more than seconds. Another delivery of the message (the other
 * event of Slack's `app_mention` + `message` pair, a redelivery) that finds the work still under
 * way waits for it up to OTHER_DELIVERY_WAIT_MS, then is refused (AckHold.refuse) so that Slack
 * sends it again rather than taking an ack as its last word: the first delivery may yet die.
 * Never throws.
 */
export function createMessageHandler(deps: MessageListenerDeps) {
  /** Messages this process is handing on now, and how that ends: stored or handled (true), or not (false). */
  const inFlight = new Map<string, Promise<boolean>>();

  return async function onSlackEvent(body: unknown, adjust?: AdjustMessage, context: SlackEventContext = {}): Promise<IngressResult | undefined> {
    let messageId: string | undefined;
    let lease: SeenLease | undefined;
    let handled = false;
    let finish: ((handled: boolean) => void) | undefined;
    // Slack's 200 waits until the ingress has the message (HTTP mode; see ack-hold.ts).
    const hold = ackHoldIn(context);
    /** Not this delivery's to do now: Slack is asked to send it again. */
    const refuse = (id: string) => {
      deps.logger.debug({ messageId: id }, 'another delivery of this Slack message is under way: asked Slack to send it again');
      hold?.refuse();
      return undefined;
    };
    try {
      // Callers without Bolt's context (assistant threads) still have the envelope's authorizations.
      if (deps.multiWorkspace && !context.botUserId) context = contextFromBody(body);
      const identity =
        deps.multiWorkspace && context.botUserId
          ? { userId: context.botUserId, ...(context.botId ? { botId: context.botId } : {}), ...(context.teamId ? { teamId: context.teamId } : {}) }
          : await deps.identity();
      const result = normaliseSlackEvent(body, identity);
      if (result.kind === 'ignored') {
        deps.logger.debug({ reason: result.reason }, 'Slack event ignored');
        return undefined;
      }
      let message = result.message;
      if (deps.multiWorkspace) message.reply = { ...message.reply, installation: installationKey(context) };
      const id = message.messageId;
      // The other event of the pair, or a redelivery, while this process hands the message on.
      const running = inFlight.get(id);
      if (running) {
        if (!(await within(running, OTHER_DELIVERY_WAIT_MS))) return refuse(id);
        deps.logger.debug({ messageId: id }, 'Slack delivery already handled');
        return undefined;
      }
      if (!deps.seen.firstHere('slack', id)) {
        deps.logger.debug({ messageId: id }, 'Slack delivery already handled');
        return undefined;
      }
      messageId = id;
      inFlight.set(id, new Promise<boolean>((resolve) => (finish = resolve)));
      // Files to read and assistant threads are work a repeat must not do again: lease first.
      // A plain message leaves its lease to the ingress, which needs none to queue it.
      if (message.hasAttachments || adjust) {
        const got = await leaseOf(deps, id);
        if (got.kind === 'busy') return refuse(id);
        if (got.kind === 'handled') {
          handled = true;
          deps.logger.debug({ messageId: id }, 'Slack delivery already handled');
          return undefined;
        }
        lease = got.lease;
      }
      if (adjust) message = await adjust(message);
      let busy = false;
      const claim = lease
        ? undefined
        : async () => {
            const got = await leaseOf(deps, id);
            if (got.kind === 'taken') lease = got.lease;
            busy = got.kind === 'busy';
            return got.kind === 'taken';
          };
      // A refused delivery must not be acked as stored.
      const outcome = await handOver(deps, message, filesOf((body as { event?: Record<string, unknown> }).event ?? {}), claim, () => {
        if (!busy) hold?.release();
      });
      if (busy) return refuse(id);
      handled = true;
      if (outcome.status === 'dropped' && outcome.reason === 'redis_unavailable') await lease?.release();
      // Handled on the record (a notice, a refusal): repeats are for the claim's hour.
      else if (outcome.status === 'dropped') await lease?.settle();
      // Queued: the push turned the lease into its mark. Duplicate: another delivery got there first.
      else lease?.stop();
      if (outcome.status === 'duplicate') deps.logger.debug({ messageId: id }, 'Slack delivery already handled');
      return outcome;
    } catch (err) {
      if (messageId) await (lease ? lease.release() : deps.seen.forget('slack', messageId));
      deps.logger.error({ messageId, ...errorFields(err) }, 'could not hand a Slack message to the ingress');
      return undefined;
    } finally {
      if (messageId) {
        inFlight.delete(messageId);
        finish?.(handled);
      }
      hold?.release();
    }
  };
}

/** A lease on the message; while another delivery's is live, looked at again for OTHER_DELIVERY_WAIT_MS. */
async function leaseOf(deps: MessageListenerDeps, id: string): Promise<LeaseResult> {
  const until = Date.now() + OTHER_DELIVERY_WAIT_MS;
  for (;;) {
    const got = await deps.seen.lease('slack', id);
    if (got.kind !== 'busy' || Date.now() + LEASE_POLL_MS > until) return got;
    await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
  }
}

/** What `p` resolved to within `ms`, else false. */
async function within(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A message that is about another one ("Ask the agent"): what it says is put under a heading. */
export interface AskedAbout {
  /** Put ahead of the message's text once its files are read, e.g. `Message from Ada:\n`. */
  heading: string;
  /** Neither text nor a file could be sent: told to the asker alone, and the ingress is not asked. */
  nothingToSend(notice: string | undefined): Promise<void>;
  /** MAX_MESSAGE_CHARS, and what the asker hears (alone) when the message asked about is longer. */
  tooLong?: { maxChars: number; tell(length: number): Promise<void> };
}

/**
 * Reads the message's files (if any) into its text and hands it to the ingress. The user hears
 * which files were not sent only when the message was queued; a message with no text left
 * gets the ingress's one line that only text is read (as on Discord).
 * Shared by messages, assistant threads and the "Ask the agent" shortcut.
 */
export async function handOver(
  deps: MessageListenerDeps,
  message: IncomingMessage,
  files: unknown,
  claim?: () => Promise<boolean>,
  /** Called once the ingress has decided (queued or dropped), before any files notice. */
  stored?: () => void,
  asked?: AskedAbout,
): Promise<IngressResult> {
  let notice: string | undefined;
  const naming = deps.users !== undefined && mentionsPeopleById(message.text);
  const answerable = (message.hasAttachments && deps.files) || naming ? await mayAnswer(deps, message) : false;
  if (answerable && deps.users) message = await withPeopleNamed(message, deps.users);
  if (message.hasAttachments && deps.files && answerable) {
    // Read against the sender's own words: a long forward is shortened (by the ingress) rather than the files left out.
    const read = await deps.files(ownWords(message), files, message.reply.installation);
    notice = read.notice;
    message = withFilesRead(message, read.text);
    // Files are dealt with here: the ingress's generic "attachments are not forwarded" note would be wrong.
    message = { ...message, hasAttachments: message.text.trim().length === 0 };
  }
  if (asked) {
    // The heading alone asks nothing: sent on, it would be a billed call about an image.
    if (!hasVisibleText(message.text)) {
      await asked.nothingToSend(notice);
      return { status: 'dropped', reason: 'empty' };
    }
    message = withHeading(message, asked.heading);
    // The asker did not write it and cannot shorten it: the ingress's public "please shorten it" would be wrong.
    const fitted = asked.tooLong ? fittedText(message, asked.tooLong.maxChars) : undefined;
    if (fitted && 'refused' in fitted) {
      // The message's own length, as the asker sees it (the heading is the bridge's).
      await asked.tooLong!.tell(Math.max(0, fitted.refused - asked.heading.length));
      return { status: 'dropped', reason: 'too_long' };
    }
  }
  const outcome = await deps.ingress.handle(message, claim ? { claim } : undefined);
  stored?.();
  if (outcome.status === 'dropped' && outcome.reason === 'redis_unavailable') await deps.seen.forget('slack', message.messageId);
  if (notice && outcome.status === 'queued' && deps.replyPort) {
    await deps.replyPort.postNotice(message.reply, notice).catch((err: Error) => deps.logger.warn({ ...errorFields(err) }, 'could not post the files notice'));
  }
  return outcome;
}

/** Mentions by ID named (mention-names.ts), the sender's own words apart from a forward's so `ownChars` still holds. */
export async function withPeopleNamed(message: IncomingMessage, users: UserDirectory): Promise<IncomingMessage> {
  if (message.ownChars === undefined) return { ...message, text: await nameMentionedPeople(message.text, users) };
  const [own, rest] = await Promise.all([
    nameMentionedPeople(message.text.slice(0, message.ownChars), users),
    nameMentionedPeople(message.text.slice(message.ownChars), users),
  ]);
  return { ...message, text: own + rest, ownChars: own.length };
}

/** Whether the bot may answer this message: only then are its files worth downloading. */
async function mayAnswer(deps: MessageListenerDeps, m: IncomingMessage): Promise<boolean> {
  if (m.fromSelf || m.fromBot) return false;
  // A reply in a thread may be a follow-up where the bot answered (a top-level message's conversation is its own thread).
  const inThread = m.conversation.threadId !== undefined && m.conversation.threadId !== m.reply.messageId;
  if (m.isDirect || m.mentionsBot || m.repliesToBot || inThread) return true;
  return (await deps.bindings?.get('slack', m.bindingChannelId))?.mode === 'all';
}

/** The installation and bot user an Events API envelope was delivered for. */
function contextFromBody(body: unknown): SlackEventContext {
  const b = (body ?? {}) as { team_id?: unknown; enterprise_id?: unknown; authorizations?: Array<{ user_id?: unknown; team_id?: unknown; is_enterprise_install?: unknown }> };
  const auth = b.authorizations?.[0] ?? {};
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const teamId = str(b.team_id) ?? str(auth.team_id);
  const enterpriseId = str(b.enterprise_id);
  const botUserId = str(auth.user_id);
  return {
    ...(botUserId ? { botUserId } : {}),
    ...(teamId ? { teamId } : {}),
    ...(enterpriseId ? { enterpriseId } : {}),
    isEnterpriseInstall: auth.is_enterprise_install === true,
  };
}

/** `handler`: the one createMessageHandler of the adapter (assistant threads share it, and so its deliveries under way). */
export function registerMessageListeners(app: App, handler: ReturnType<typeof createMessageHandler>): void {
  app.event('message', async ({ body, context }) => void (await handler(body, undefined, context)));
  app.event('app_mention', async ({ body, context }) => void (await handler(body, undefined, context)));
}
