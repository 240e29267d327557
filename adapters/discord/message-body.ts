import { EmbedType, MessageReferenceType, cleanContent, type Embed, type Message, type MessageSnapshot } from 'discord.js';

/**
 * What a message says beyond its `content`: the embeds a bot or webhook made, and the messages
 * a forward carries (`message_reference.type` 1, `message_snapshots`), whose own content is
 * empty. Without them, an embed-only bot message or a forward read as empty.
 */

/**
 * The text of the embeds a bot or a webhook made (`rich`). Link previews Discord adds to a
 * person's link are left out: the link is in the text, and the preview is the site's words.
 */
export function embedText(embeds: readonly Embed[] | undefined): string {
  return (embeds ?? [])
    .filter((e) => (e.data.type ?? EmbedType.Rich) === EmbedType.Rich)
    .map((e) =>
      [
        e.author?.name,
        e.title ? `**${e.title}**` : undefined,
        e.description,
        ...e.fields.map((f) => `${f.name}: ${f.value}`),
        e.footer?.text,
      ]
        .map((part) => part?.trim())
        .filter(Boolean)
        .join('\n'),
    )
    .filter(Boolean)
    .join('\n\n');
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
 * message's own), quoted under a line that says it
 * was forwarded, so the agent does not take it for the sender's own words. Mentions in it are
 * made readable; they address nobody (a forward pings no one).
 */
export function forwardedText(message: Pick<Message, 'reference' | 'messageSnapshots' | 'channel'>): string {
  return forwardedSnapshots(message)
    .map((snapshot) => {
      const content = snapshot.content ?? '';
      const readable = message.channel ? cleanContent(content, message.channel) : content;
      const body = [readable.trim(), embedText(snapshot.embeds)].filter(Boolean).join('\n\n');
      if (!body) return '';
      return `Forwarded message:\n${body.split('\n').map((line) => `> ${line}`).join('\n')}`;
    })
    .filter(Boolean)
    .join('\n\n');
}
