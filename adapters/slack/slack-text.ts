/**
 * Slack's message markup turned back into what the user sees, for the agent: `<@U1>` →
 * `@U1`, `<#C1|general>` → `#general`, `<https://x|label>` → `label (https://x)`,
 * `<!here>` → `@here`, then `&lt;` `&gt;` `&amp;` decoded. Mentions of the bot itself are
 * removed (they address the bot; they are not part of the question).
 */
export function slackTextToPlain(text: string, botUserId?: string): string {
  let out = String(text ?? '');
  if (botUserId) out = stripMention(out, botUserId);
  out = out.replace(/<([^<>\n]{1,3000})>/g, (_whole, inner: string) => {
    const [target = '', label] = splitOnce(inner, '|');
    // A user group's label comes with its `@` (`<!subteam^S1|@devs>`), as a broadcast's may.
    const named = (fallback: string) => `@${(label || fallback).replace(/^@/, '')}`;
    if (target.startsWith('@')) return named(target.slice(1));
    if (target.startsWith('#')) return `#${label || target.slice(1)}`;
    if (target.startsWith('!subteam^')) return named(target.slice('!subteam^'.length));
    if (target.startsWith('!date^')) return label ?? '';
    if (target.startsWith('!')) return named(target.slice(1));
    return label && label !== target ? `${label} (${target})` : target;
  });
  return out.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim();
}

/** Whether `<@BOT>` or `<@BOT|name>` appears in Slack text. */
export function mentionsUser(text: string, userId: string): boolean {
  return mentionPattern(userId).test(String(text ?? ''));
}

/**
 * Removes the bot's mentions with the spaces around them, and only those: the rest of the text
 * keeps its spacing (code indentation, aligned columns). One space stays between words the
 * mention separated; none at the start or end of a line.
 */
function stripMention(text: string, userId: string): string {
  return text.replace(new RegExp(`(?:[ \\t]*${mentionPattern(userId).source})+[ \\t]*`, 'g'), (_whole, offset: number, all: string) => {
    const end = offset + _whole.length;
    const lineStart = offset === 0 || all[offset - 1] === '\n';
    const lineEnd = end === all.length || all[end] === '\n';
    return lineStart || lineEnd ? '' : ' ';
  });
}

function mentionPattern(userId: string): RegExp {
  const id = userId.replace(/[^A-Za-z0-9]/g, '');
  return new RegExp(`<@${id}(?:\\|[^>]*)?>`);
}

function splitOnce(s: string, sep: string): [string, string | undefined] {
  const i = s.indexOf(sep);
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 1)];
}
