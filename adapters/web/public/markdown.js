/* global document -- browser module, served as is */
// A small, safe Markdown renderer: it builds DOM nodes and sets only textContent, so no text
// from the agent or a user is ever parsed as HTML. Links are kept only for http(s) and mailto.

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const BULLET = /^ {0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;

const INLINE = new RegExp(
  [
    '(`+)([^`]|[^`][\\s\\S]*?[^`])\\1(?!`)', // 1,2 code span
    '\\[([^\\]\\n]+)\\]\\(((?:https?:\\/\\/|mailto:)[^\\s)]+)\\)', // 3,4 link
    '\\*\\*(?=\\S)([\\s\\S]*?\\S)\\*\\*', // 5 strong
    '__(?=\\S)([\\s\\S]*?\\S)__', // 6 strong
    '~~(?=\\S)([\\s\\S]*?\\S)~~', // 7 strike
    '\\*(?=[^\\s*])([\\s\\S]*?[^\\s*])\\*', // 8 em
    '(?<![\\w])_(?=[^\\s_])([\\s\\S]*?[^\\s_])_(?![\\w])', // 9 em
    '(https?:\\/\\/[^\\s<>()]*[^\\s<>().,;:!?\'"])', // 10 bare URL
  ].join('|'),
  'g',
);

function el(tag, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
}

function link(text, href) {
  const a = el('a');
  a.href = href;
  a.rel = 'noopener noreferrer nofollow';
  a.target = '_blank';
  a.textContent = text;
  return a;
}

/** Inline Markdown of one paragraph into `parent`; line breaks become <br>. */
export function renderInline(text, parent) {
  const lines = String(text).split('\n');
  lines.forEach((line, i) => {
    if (i > 0) parent.append(el('br'));
    inline(line, parent);
  });
  return parent;
}

function inline(text, parent) {
  let last = 0;
  INLINE.lastIndex = 0;
  for (let m = INLINE.exec(text); m; m = INLINE.exec(text)) {
    if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
    last = m.index + m[0].length;
    if (m[2] !== undefined) {
      const code = el('code');
      code.textContent = m[2].replace(/^ (.+) $/, '$1');
      parent.append(code);
    } else if (m[3] !== undefined) {
      parent.append(link(m[3], m[4]));
    } else if (m[5] !== undefined || m[6] !== undefined) {
      parent.append(nested('strong', m[5] ?? m[6]));
    } else if (m[7] !== undefined) {
      parent.append(nested('s', m[7]));
    } else if (m[8] !== undefined || m[9] !== undefined) {
      parent.append(nested('em', m[8] ?? m[9]));
    } else if (m[10] !== undefined) {
      parent.append(link(m[10], m[10]));
    }
    // The regex is shared: nested calls moved it, so put it back after this match.
    INLINE.lastIndex = last;
  }
  if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
}

function nested(tag, text) {
  const node = el(tag);
  inline(text, node);
  return node;
}

/** Renders Markdown into a DocumentFragment of block elements. */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (line.trim() === '') {
      i++;
    } else if ((m = FENCE.exec(line))) {
      const marker = m[1];
      const body = [];
      for (i++; i < lines.length; i++) {
        const close = FENCE.exec(lines[i]);
        if (close && close[1][0] === marker[0] && close[1].length >= marker.length && !close[2]) break;
        body.push(lines[i]);
      }
      i++;
      const pre = el('pre');
      const code = el('code');
      if (m[2]) code.dataset.lang = m[2];
      code.textContent = body.join('\n');
      pre.append(code);
      fragment.append(pre);
    } else if ((m = HEADING.exec(line))) {
      // Headings inside a message stay below the page's own heading levels.
      const h = el('p', `md-heading md-h${m[1].length}`);
      inline(m[2], h);
      fragment.append(h);
      i++;
    } else if (RULE.test(line)) {
      fragment.append(el('hr'));
      i++;
    } else if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        body.push(m[1]);
        i++;
      }
      const quote = el('blockquote');
      quote.append(renderMarkdown(body.join('\n')));
      fragment.append(quote);
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const ordered = !BULLET.test(line);
      const pattern = ordered ? NUMBERED : BULLET;
      const list = el(ordered ? 'ol' : 'ul');
      if (ordered) list.start = Number(NUMBERED.exec(line)[1]);
      while (i < lines.length && (m = pattern.exec(lines[i]))) {
        const item = el('li');
        renderInline(ordered ? m[2] : m[1], item);
        list.append(item);
        i++;
      }
      fragment.append(list);
    } else {
      const para = [];
      while (
        i < lines.length &&
        lines[i].trim() !== '' &&
        !FENCE.test(lines[i]) &&
        !HEADING.test(lines[i]) &&
        !QUOTE.test(lines[i]) &&
        !BULLET.test(lines[i]) &&
        !NUMBERED.test(lines[i])
      ) {
        para.push(lines[i]);
        i++;
      }
      fragment.append(renderInline(para.join('\n'), el('p')));
    }
  }
  return fragment;
}
