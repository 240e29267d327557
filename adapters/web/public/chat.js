/* global document, CSS, EventSource, localStorage, setTimeout -- browser module, served as is */
// The chat pane: one channel's events over Server-Sent Events, and the message box.
import { api, el, time, uuid } from './api.js';
import { renderInline, renderMarkdown } from './markdown.js';
import { renderCommandReply } from './reply-view.js';

const DROPPED = {
  not_bound: 'not sent to the agent: this channel is not bound (bind it above)',
  not_addressed: 'not sent to the agent: it was not addressed (tick “Mention the agent” or start with @agent)',
  self: 'not sent: the bridge’s own message',
  bot: 'not sent: messages from bots are ignored',
  content_missing: 'not sent: the message had no content',
  empty: 'not sent: the message is empty',
  too_long: 'not sent: the message is too long',
  over_quota: 'not sent: over the quota',
  redis_unavailable: 'not sent: the queue is unavailable',
};

/** Delivery notes ("not sent: over the quota") outlive a reload: kept in the browser, newest last. */
const STORED_RESULTS = 'agent-bridge.playground.results';
const MAX_STORED_RESULTS = 300;

function loadResults() {
  try {
    return new Map(JSON.parse(localStorage.getItem(STORED_RESULTS) || '[]'));
  } catch {
    return new Map();
  }
}

function saveResults(results) {
  try {
    localStorage.setItem(STORED_RESULTS, JSON.stringify([...results].slice(-MAX_STORED_RESULTS)));
  } catch {
    // Storage full or refused: the note lasts until the reload.
  }
}

/** How often the page asks whether the queue (Redis) is available. */
const QUEUE_CHECK_MS = 1000;
const QUEUE_DOWN = 'The queue is unavailable, retrying… (the bridge lost its Redis connection)';

/** A "working" event this old without its "done" is a worker that went away. */
const STALE_WORKING_MS = 10 * 60 * 1000;

function resultWords(result) {
  if (result.status === 'queued') return { text: 'sent to the agent', warn: false };
  if (result.status === 'duplicate') return { text: 'already sent', warn: false };
  return { text: DROPPED[result.reason] || `not sent: ${result.reason}`, warn: true };
}

export function createChat({ getUser, onActivity, onCredentialForm }) {
  const list = document.getElementById('messages');
  const workingLine = document.getElementById('working');
  const form = document.getElementById('composer');
  const textarea = document.getElementById('composer-text');
  const mention = document.getElementById('mention');
  const sendButton = document.getElementById('send-button');
  const sendStatus = document.getElementById('send-status');

  let channel;
  let source;
  let seen = new Set();
  let working = new Map();
  const results = loadResults();
  const emptyHint = el('li', 'empty-hint');
  emptyHint.append(
    el('strong', undefined, 'No messages here yet. '),
    'First bind this channel to an agent instance (the form above), then write a message that starts with ',
    el('code', undefined, '@agent'),
    ' (or tick “Mention the agent”). Type ',
    el('code', undefined, '/agent help'),
    ' for the commands.',
  );
  let draftId = uuid();
  let sending = false;

  const nearBottom = () => list.scrollHeight - list.scrollTop - list.clientHeight < 80;
  const append = (item) => {
    emptyHint.remove();
    const stick = nearBottom();
    list.append(item);
    if (stick) list.scrollTop = list.scrollHeight;
  };
  const userMessage = (id) => list.querySelector(`li[data-message-id="${CSS.escape(id)}"]`);

  function showResult(messageId) {
    const item = userMessage(messageId);
    const result = results.get(messageId);
    if (!item || !result) return;
    const slot = item.querySelector('.msg-result');
    const words = resultWords(result);
    slot.textContent = words.text;
    slot.classList.toggle('warn', words.warn);
  }

  function updateWorking() {
    for (const [id, at] of working) if (Date.now() - at > STALE_WORKING_MS) working.delete(id);
    workingLine.textContent = working.size > 0 ? 'The agent is working…' : '';
    for (const item of list.querySelectorAll('li.msg-user')) {
      const state = item.querySelector('.msg-state');
      if (working.has(item.dataset.messageId)) {
        state.textContent = 'working…';
        state.className = 'msg-state working-dot';
      } else if (state.classList.contains('working-dot')) {
        state.textContent = '';
        state.className = 'msg-state';
      }
    }
  }

  function header(name, at, extra) {
    const head = el('p', 'msg-head');
    head.append(el('span', 'msg-author', name), ' ', time(at));
    if (extra) head.append(' ', extra);
    return head;
  }

  function onEvent(event) {
    if (seen.has(event.id)) return;
    seen.add(event.id);
    if (event.type === 'message') {
      const item = el('li', 'msg msg-user');
      item.dataset.messageId = event.messageId;
      item.append(header(event.userName || event.userId, event.at));
      const body = el('div', 'msg-text');
      if (event.mention) body.append(el('span', 'mention-chip', '@agent'), ' ');
      body.append(document.createTextNode(event.text));
      const foot = el('p', 'msg-foot');
      foot.append(el('span', 'msg-result'), ' ', el('span', 'msg-state'));
      item.append(body, foot);
      append(item);
      showResult(event.messageId);
    } else if (event.type === 'reply') {
      const item = el('li', 'msg msg-agent');
      item.dataset.replyTo = event.replyTo;
      item.dataset.index = String(event.index);
      const to = userMessage(event.replyTo)?.querySelector('.msg-author')?.textContent;
      item.append(header('Agent', event.at, to ? el('span', 'muted', `replying to ${to}`) : undefined));
      const body = el('div', 'msg-text markdown');
      body.append(renderMarkdown(event.text));
      item.append(body);
      if (event.feedback) item.append(feedbackButtons(event.feedback));
      append(item);
    } else if (event.type === 'notice') {
      const item = el('li', 'msg msg-notice');
      item.dataset.replyTo = event.replyTo;
      item.append(header('agent-bridge', event.at, el('span', 'muted', 'notice')));
      item.append(renderInline(event.text, el('p', 'msg-text')));
      append(item);
    } else if (event.type === 'working') {
      if (Date.now() - event.at < STALE_WORKING_MS) working.set(event.replyTo, event.at);
      updateWorking();
    } else if (event.type === 'done') {
      working.delete(event.replyTo);
      updateWorking();
      if (event.outcome === 'failed') {
        const state = userMessage(event.replyTo)?.querySelector('.msg-state');
        if (state) {
          state.className = 'msg-state failed';
          state.textContent = '⚠ the agent could not answer';
        }
      }
    }
    onActivity?.(event);
  }

  function connect(channelId) {
    source?.close();
    list.setAttribute('aria-busy', 'true');
    source = new EventSource(`/playground/events?channel=${encodeURIComponent(channelId)}`);
    source.onmessage = (e) => {
      try {
        onEvent(JSON.parse(e.data));
      } catch {
        // A malformed event is skipped; the next one renders.
      }
    };
    source.addEventListener('ready', () => {
      list.setAttribute('aria-busy', 'false');
      if (list.children.length === 0) list.append(emptyHint);
      list.scrollTop = list.scrollHeight;
      if (sendStatus.dataset.kind === 'connection') status('');
    });
    source.addEventListener('problem', (e) => status(JSON.parse(e.data).error, 'connection'));
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) status('Connection lost, reconnecting…', 'connection');
    };
  }

  function status(text, kind = '') {
    sendStatus.textContent = text;
    sendStatus.dataset.kind = kind;
  }

  // 👍/👎 on the last chunk of a reply: one vote per user per reply (a second click replaces it).
  function feedbackButtons(ref) {
    const row = el('p', 'msg-feedback');
    const said = el('span', 'muted');
    for (const [rating, label, words] of [['positive', '👍', 'Good response'], ['negative', '👎', 'Bad response']]) {
      const button = el('button', 'feedback-button', label);
      button.type = 'button';
      button.dataset.rating = rating;
      button.setAttribute('aria-label', words);
      button.addEventListener('click', async () => {
        const userName = getUser();
        if (!userName) return void (said.textContent = 'Enter your name at the top first.');
        try {
          const data = await api('feedback', { channel, userName, rating, ...ref });
          said.textContent = data.text;
        } catch (err) {
          said.textContent = err.message;
        }
      });
      row.append(button, ' ');
    }
    row.append(said);
    return row;
  }

  function ephemeral(reply) {
    const item = el('li', 'msg msg-ephemeral');
    item.append(header('agent-bridge', Date.now(), el('span', 'muted', 'only visible to you')));
    item.append(renderCommandReply(reply));
    append(item);
  }

  async function send() {
    if (sending) return;
    const userName = getUser();
    const text = textarea.value;
    if (!userName) return status('Enter your name at the top first.');
    if (!text.trim()) return status('Type a message first.');
    sending = true;
    sendButton.disabled = true;
    let keepFocus = true;
    try {
      if (/^\/agent(\s|$)/i.test(text.trim())) {
        const data = await api('command-text', { channel, userName, text: text.trim().slice(6) });
        ephemeral(data.reply);
        if (data.credentialFormFor) {
          onCredentialForm?.(data.credentialFormFor);
          keepFocus = false;
        }
      } else {
        const data = await api('messages', { channel, userName, messageId: draftId, text, mention: mention.checked });
        results.set(data.messageId, data.result);
        saveResults(results);
        showResult(data.messageId);
        draftId = uuid();
      }
      textarea.value = '';
      status('');
    } catch (err) {
      // The draft keeps its ID, so sending it again cannot make a second message.
      if (err.status === 503) status(QUEUE_DOWN, 'queue');
      else status(err.message);
    } finally {
      sending = false;
      sendButton.disabled = false;
      // A command that opened a form leaves the focus there.
      if (keepFocus) textarea.focus();
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    send();
  });
  textarea.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  textarea.addEventListener('input', () => {
    // A changed draft is a new message.
    if (!sending) draftId = uuid();
  });

  // The bridge answers /status from memory, even while Redis is gone, so the page can say so at once.
  async function checkQueue() {
    try {
      const { queue } = await api('status');
      if (queue !== 'ok' && sendStatus.dataset.kind !== 'queue') status(QUEUE_DOWN, 'queue');
      if (queue === 'ok' && sendStatus.dataset.kind === 'queue') status('');
    } catch {
      // The bridge itself is away: the event stream says "Connection lost".
    }
    setTimeout(checkQueue, QUEUE_CHECK_MS);
  }
  checkQueue();

  return {
    setChannel(channelId, name) {
      channel = channelId;
      seen = new Set();
      working = new Map();
      list.replaceChildren();
      list.setAttribute('aria-label', `Messages in #${name}`);
      document.getElementById('composer-label').textContent = `Message #${name}`;
      updateWorking();
      status('');
      connect(channelId);
    },
    showCommandReply: ephemeral,
  };
}
