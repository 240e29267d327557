import { escapeSlackText } from './escape.js';

type Json = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter((e): e is Json => !!e && typeof e === 'object') : []);

/** Most characters read out of a message's blocks (the ingress cuts a long message anyway). */
const MAX_CHARS = 100_000;

/**
 * The Slack markup of a message's `rich_text` blocks, for a message that came with blocks and
 * no `text` (posted through the API, some clients and integrations): mentions as `<@U…>`, links
 * as `<url|label>`, lists as bullets, code as fences, quotes as `> `. Other blocks are skipped.
 */
export function richTextToSlackText(blocks: unknown): string {
  const out = list(blocks)
    .filter((b) => b.type === 'rich_text')
    .flatMap((b) => list(b.elements).map((el) => container(el, 0)))
    .join('\n');
  return out.slice(0, MAX_CHARS);
}

/** Lists nest at most this deep (Slack's own limit is 8); deeper ones are skipped, never recursed into. */
const MAX_DEPTH = 8;

function container(el: Json, depth: number): string {
  if (depth > MAX_DEPTH) return '';
  switch (el.type) {
    case 'rich_text_section':
      return inline(el.elements);
    case 'rich_text_preformatted':
      return `\`\`\`\n${inline(el.elements)}\n\`\`\``;
    case 'rich_text_quote':
      return inline(el.elements)
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'rich_text_list': {
      const ordered = el.style === 'ordered';
      return list(el.elements)
        .map((item, i) => `${'  '.repeat(Math.min(Math.max(Math.trunc(Number(el.indent)) || 0, 0), MAX_DEPTH))}${ordered ? `${i + 1}.` : '•'} ${container(item, depth + 1)}`)
        .join('\n');
    }
    default:
      return '';
  }
}

function inline(elements: unknown): string {
  return list(elements)
    .map((e) => {
      switch (e.type) {
        case 'text':
          return escapeSlackText(str(e.text));
        case 'link':
          return e.text ? `<${str(e.url)}|${escapeSlackText(str(e.text))}>` : `<${str(e.url)}>`;
        case 'user':
          return `<@${str(e.user_id)}>`;
        case 'channel':
          return `<#${str(e.channel_id)}>`;
        case 'usergroup':
          return `<!subteam^${str(e.usergroup_id)}>`;
        case 'broadcast':
          return `<!${str(e.range)}>`;
        case 'emoji':
          return `:${str(e.name)}:`;
        // A date shows in each reader's time zone; its fallback is the one text it carries.
        case 'date':
          return escapeSlackText(str(e.fallback) || str(e.text));
        default:
          return escapeSlackText(str(e.text));
      }
    })
    .join('');
}
