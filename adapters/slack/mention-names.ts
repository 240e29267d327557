import type { UserDirectory } from './user-directory.js';

/** A member ID as the plain text shows an unlabelled `<@U…>` mention (slack-text.ts). */
const MENTIONED_ID = /@([UW][A-Z0-9]{6,20})\b/g;
/** Most distinct people named per message (each is a users.info call unless cached). */
const MAX_NAMED = 10;
/** How long the names may hold up a message (Slack's ack waits for it over HTTP). */
const NAMES_WAIT_MS = 1_500;

/** Whether the plain text shows a person's mention by ID only. */
export const mentionsPeopleById = (text: string): boolean => new RegExp(MENTIONED_ID.source).test(text);

/**
 * Slack sends a mention of a person as `<@U0123ABCD>`, with no name: the agent would read
 * `@U0123ABCD` and not know who is meant ("what did @U0123ABCD ask me?"). Each one becomes
 * `@<their name>` (users.info, cached); one that cannot be named in time stays as it was.
 */
export async function nameMentionedPeople(text: string, users: UserDirectory, waitMs = NAMES_WAIT_MS): Promise<string> {
  const ids = [...new Set(Array.from(text.matchAll(MENTIONED_ID), (m) => m[1]!))].slice(0, MAX_NAMED);
  if (ids.length === 0) return text;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
  const names = new Map<string, string>();
  try {
    await Promise.race([
      Promise.all(ids.map((id) => users.get(id).then((u) => void (u.name && u.name !== id && names.set(id, u.name)), () => undefined))),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
  return names.size === 0 ? text : text.replace(MENTIONED_ID, (whole, id: string) => (names.has(id) ? `@${names.get(id)!}` : whole));
}
