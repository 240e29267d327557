/* global document, fetch, crypto, Node -- browser module, served as is */
// The playground's JSON API, and small helpers shared by the page's modules.

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/** Calls `/playground/api/<path>`; throws ApiError with the server's words on a 4xx/5xx. */
export async function api(path, body) {
  const init = body === undefined
    ? { credentials: 'same-origin' }
    : { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  let res;
  try {
    res = await fetch(`/playground/api/${path}`, init);
  } catch {
    throw new ApiError('The bridge did not answer. Is it still running?', 0);
  }
  let data = {};
  try {
    data = await res.json();
  } catch {
    // Not JSON: the status alone tells.
  }
  if (!res.ok) throw new ApiError(data.error || `The bridge answered ${res.status}.`, res.status);
  return data;
}

/** A UUID v4; crypto.randomUUID needs a secure context, which a LAN address is not. */
export function uuid() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function time(at) {
  const d = new Date(at);
  const t = el('time', 'time', d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }));
  t.dateTime = d.toISOString();
  return t;
}

/** A table with column headers, every cell as text. */
export function table(columns, rows, caption) {
  const t = el('table');
  if (caption) t.append(el('caption', 'visually-hidden', caption));
  const head = el('thead');
  const hr = el('tr');
  for (const c of columns) {
    const th = el('th', undefined, c);
    th.scope = 'col';
    hr.append(th);
  }
  head.append(hr);
  const bodyEl = el('tbody');
  for (const row of rows) {
    const tr = el('tr');
    for (const cell of row) tr.append(cell instanceof Node ? wrapCell(cell) : el('td', undefined, String(cell)));
    bodyEl.append(tr);
  }
  t.append(head, bodyEl);
  return t;
}

function wrapCell(node) {
  const td = el('td');
  td.append(node);
  return td;
}
