// Renders a platform-neutral CommandReply ({ ok, title, lines, table }) as HTML.
import { el, table } from './api.js';
import { renderInline } from './markdown.js';

export function renderCommandReply(reply) {
  const box = el('div', `command-reply ${reply.ok ? 'ok' : 'not-ok'}`);
  const title = el('p', 'command-title');
  title.append(el('span', 'visually-hidden', reply.ok ? 'Done: ' : 'Problem: '));
  renderInline(reply.title || '', title);
  box.append(title);
  for (const line of reply.lines || []) box.append(renderInline(line, el('p')));
  if (reply.table && reply.table.rows.length > 0) {
    const wrap = el('div', 'table-wrap');
    wrap.append(table(reply.table.columns, reply.table.rows.map((r) => r.map((c) => renderInline(c, el('span'))))));
    box.append(wrap);
  }
  return box;
}
