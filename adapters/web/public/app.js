/* global document, history, localStorage, location -- browser module, served as is */
// The playground page: wires the channel list, the chat pane and the admin pane together.
import { api, el } from './api.js';
import { createAdmin } from './admin.js';
import { createChat } from './chat.js';
import { renderInline } from './markdown.js';

const nameField = document.getElementById('user-name');
const STORED_NAME = 'agent-bridge.playground.name';

let channels = [];
let current;

function getUser() {
  return nameField.value.trim();
}

nameField.value = localStorage.getItem(STORED_NAME) || 'guest';

// The skip link moves focus without touching the URL: its hash names the channel.
document.querySelector('.skip-link').addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('composer-text').focus();
});
nameField.addEventListener('change', () => localStorage.setItem(STORED_NAME, getUser()));

const admin = createAdmin({
  getUser,
  getChannel: () => current,
  onBindingsChanged: (bindings) => {
    for (const button of document.querySelectorAll('#channel-list button')) {
      const bound = bindings.some((b) => b.channelId === button.dataset.channel);
      button.querySelector('.bound-mark').textContent = bound ? 'bound' : '';
    }
  },
});

const chat = createChat({
  getUser,
  onActivity: (event) => {
    if (event.type === 'done' || event.type === 'message') admin.refreshSoon();
  },
  onCredentialForm: (instanceId) => admin.openCredentialForm(instanceId),
});

function selectChannel(channel) {
  current = channel;
  for (const button of document.querySelectorAll('#channel-list button')) {
    if (button.dataset.channel === channel.id) button.setAttribute('aria-current', 'true');
    else button.removeAttribute('aria-current');
  }
  document.getElementById('channel-title').textContent = `#${channel.name}`;
  document.getElementById('channel-topic').replaceChildren(renderInline(channel.topic ?? '', document.createDocumentFragment()));
  document.getElementById('tools-channel').textContent = `#${channel.name}`;
  document.title = `#${channel.name} – agent-bridge playground`;
  history.replaceState(null, '', `#${channel.id}`);
  chat.setChannel(channel.id, channel.name);
  admin.channelChanged();
}

async function main() {
  const info = await api('info');
  channels = info.channels;
  if (info.mode === 'demo') {
    const badge = document.getElementById('mode-badge');
    badge.textContent = 'Demo: local agent emulator';
    badge.hidden = false;
  }
  const list = document.getElementById('channel-list');
  for (const channel of channels) {
    const button = el('button', 'channel-button');
    button.type = 'button';
    button.dataset.channel = channel.id;
    button.append(el('span', 'hash', '#'), el('span', undefined, channel.name), el('span', 'bound-mark'));
    button.addEventListener('click', () => selectChannel(channel));
    const item = el('li');
    item.append(button);
    list.append(item);
  }
  const wanted = channels.find((c) => `#${c.id}` === location.hash) ?? channels[0];
  selectChannel(wanted);
  await admin.start();
}

main().catch((err) => {
  const status = document.getElementById('send-status');
  status.textContent = `The playground could not start: ${err.message}`;
});
