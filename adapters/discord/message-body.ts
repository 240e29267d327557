import { EmbedType, MessageReferenceType, cleanContent, type Embed, type Message, type MessageSnapshot } from 'discord.js';

/**
 * What a message says beyond its `content`: the embeds a bot or webhook made, a poll, and the messages
 * a forward carries (`message_reference.type` 1, `message_snapshots`), whose own content is
 * empty. Without them, an embed-only bot message or a forward read as empty.
 */

/** A string part of a payload, trimmed; anything else (a gateway may send odd types) reads as absent. */
const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');
const field = (o: unknown, key: string): unknown => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[key] : undefined);

/** One embed's words: author, title, description, fields (`name: value`), footer. */
function oneEmbed(data: unknown): string {
  if (data === null || typeof data !== 'object') return '';
  const type = field(data, 'type');
  // Link previews Discord adds to a person's link: the link is in the text, the preview is the site's words.
  if (type !== undefined && type !== EmbedType.Rich) return '';
  const fields = field(data, 'fields');
  const title = str(field(data, 'title'));
  return [
    str(field(field(data, 'author'), 'name')),
    title ? `**${title}**` : '',
    str(field(data, 'description')),
    ...(Array.isArray(fields) ? fields : []).map((f) => [str(field(f, 'name')), str(field(f, 'value'))].filter(Boolean).join(': ')),
    str(field(field(data, 'footer'), 'text')),
  ]
    .filter(Boolean)
    .join('\n');
}

/** The text of the embeds a bot or a webhook made (`rich`), read from their payload whatever its shape. */
export function embedText(embeds: readonly Pick<Embed, 'data'>[] | undefined): string {
  return (Array.isArray(embeds) ? embeds : [])
    .map((e) => oneEmbed(field(e, 'data')))
    .filter(Boolean)
    .join('\n\n');
}

/** A poll's question and answers (`Poll: …` then `- …` each); a poll message has no content. */
export function pollText(poll: Pick<Message, 'poll'>['poll'] | undefined): string {
  if (!poll) return '';
  const question = str(field(poll.question, 'text'));
  const answers = poll.answers && typeof poll.answers.values === 'function' ? [...poll.answers.values()].map((a) => str(field(a, 'text'))).filter(Boolean) : [];
  if (!question && answers.length === 0) return '';
  return [`Poll: ${question}`.trim(), ...answers.map((a) => `- ${a}`)].join('\n');
}

/** A forward's snapshots (none for any other message, or when discord.js gave none). */
export function forwardedSnapshots(message: Pick<Message, 'reference' | 'messageSnapshots'>): MessageSnapshot[] {
  if (message.reference?.type !== MessageReferenceType.Forward) return [];
  const snapshots = message.messageSnapshots as Message['messageSnapshots'] | undefined;
  return snapshots ? [...snapshots.values()] : [];
}

/** The message's files and those of the messages it forwards (read like its own, see attachments.ts). */
export function attachmentsWithForwarded(message: Pick<Message, 'reference' | 'messageSnapshots' | 'attachments'>): Pick<Message, 'attachments'> {
  const forwarded = forwardedSnapshots(message).flatMap((s) => (s.attachments ? [s.attachments] : []));
  return forwarded.length === 0 ? message : { attachments: message.attachments.concat(...forwarded) };
}

/**
 * The forwarded messages' text (content, then their embeds; their files are read with the
 * message's own), quoted under a line that says it was forwarded, so the agent does not take it
 * for the sender's own words. Mentions in it are made readable; they address nobody (a forward
 * pings no one).
 */
export function forwardedText(message: Pick<Message, 'reference' | 'messageSnapshots' | 'channel'>): string {
  return forwardedSnapshots(message)
    .map((snapshot) => {
      const content = typeof snapshot.content === 'string' ? snapshot.content : '';
      const readable = message.channel ? cleanContent(content, message.channel) : content;
      const body = [readable.trim(), embedText(snapshot.embeds)].filter(Boolean).join('\n\n');
      if (!body) return '';
      return `Forwarded message:\n${body.split('\n').map((line) => `> ${line}`).join('\n')}`;
    })
    .filter(Boolean)
    .join('\n\n');
}
