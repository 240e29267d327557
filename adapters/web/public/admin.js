/* global document, setTimeout, clearTimeout -- browser module, served as is */
// The admin pane and the bind form: instances, bindings, credentials, queue figures, commands.
import { api, el, table } from './api.js';
import { renderCommandReply } from './reply-view.js';

const POLL_MS = 3000;

function modeWords(mode) {
  return mode === 'all' ? 'every message' : 'when mentioned';
}

export function createAdmin({ getUser, getChannel, onBindingsChanged }) {
  const $ = (id) => document.getElementById(id);
  const output = $('command-output');
  let instances = [];
  let bindings = [];

  function show(reply, target = output) {
    target.replaceChildren(renderCommandReply(reply));
  }

  function problem(message, target = output) {
    show({ ok: false, title: message, lines: [] }, target);
  }

  function who() {
    const userName = getUser();
    if (!userName) throw new Error('Enter your name at the top first.');
    return { channel: getChannel().id, userName };
  }

  async function run(path, body, target = output) {
    try {
      const data = await api(path, { ...who(), ...body });
      show(data.reply, target);
      return data.reply;
    } catch (err) {
      problem(err.message, target);
      return undefined;
    }
  }

  function fillSelect(select, keep, short = false) {
    const previous = keep ?? select.value;
    select.replaceChildren(
      ...instances.map((i) => {
        const label = short ? i.name : `${i.name} (${i.id})`;
        const option = el('option', undefined, `${label}${i.status === 'running' ? '' : ` – ${i.status}`}`);
        option.value = i.id;
        return option;
      }),
    );
    if (instances.some((i) => i.id === previous)) select.value = previous;
  }

  async function loadInstances() {
    const box = $('instances');
    try {
      instances = (await api('instances')).instances;
      fillSelect($('bind-instance'), bindingOf(getChannel().id)?.instanceId, true);
      fillSelect($('cred-instance'));
      box.replaceChildren(
        instances.length
          ? table(['Name', 'ID', 'Status'], instances.map((i) => [i.name, i.id, i.status]), 'Instances')
          : el('p', 'muted', 'The account has no instances.'),
      );
    } catch (err) {
      box.replaceChildren(el('p', 'warn', err.message));
    }
  }

  const bindingOf = (channelId) => bindings.find((b) => b.channelId === channelId);

  function renderBindingSummary() {
    const b = bindingOf(getChannel().id);
    const summary = $('binding-summary');
    summary.replaceChildren();
    if (!b) {
      summary.append(el('strong', undefined, 'Not bound.'), ' Messages here go to no agent until you bind an instance.');
      summary.className = 'binding-summary unbound';
      return;
    }
    const name = instances.find((i) => i.id === b.instanceId)?.name ?? b.instanceId;
    summary.append('Bound to ', el('strong', undefined, name), `, answers ${modeWords(b.mode)} · errors: ${b.errorPolicy} · context: ${b.context}`);
    summary.className = 'binding-summary bound';
  }

  /**
   * The setting dropdowns show the channel's stored values, except one the user has changed
   * and not yet set (the 3 s refresh must not undo a choice in progress).
   */
  const choosing = new Set();
  for (const id of ['set-errors-value', 'set-context-value']) $(id).addEventListener('change', () => choosing.add(id));
  function showSettings() {
    const b = bindingOf(getChannel().id);
    for (const [id, value] of [['set-errors-value', b?.errorPolicy ?? 'reply'], ['set-context-value', b?.context ?? 'off']]) {
      const select = $(id);
      if (!choosing.has(id) && [...select.options].some((o) => o.value === value)) select.value = value;
    }
  }

  async function loadBindings() {
    try {
      bindings = (await api('bindings')).bindings;
    } catch {
      return;
    }
    const box = $('bindings');
    box.replaceChildren(
      bindings.length
        ? table(
            ['Channel', 'Instance', 'Answers', 'Errors', 'Context'],
            bindings.map((b) => [`#${b.channelId}`, b.instanceId, modeWords(b.mode), b.errorPolicy, b.context]),
            'Bindings',
          )
        : el('p', 'muted', 'No channel is bound yet.'),
    );
    renderBindingSummary();
    showSettings();
    onBindingsChanged?.(bindings);
  }

  async function loadQueue() {
    try {
      const { counts, failures } = await api('queue');
      for (const dd of document.querySelectorAll('#queue-counts dd')) dd.textContent = String(counts[dd.dataset.count] ?? '–');
      $('failures').replaceChildren(
        failures.length
          ? table(
              ['Reference', 'When', 'Where', 'Reason'],
              failures.map((f) => [f.ref, new Date(f.at).toLocaleTimeString(), `${f.platform} · ${f.instanceId}`, f.reason]),
              'Recent failures',
            )
          : el('p', 'muted', 'No failures.'),
      );
    } catch (err) {
      $('failures').replaceChildren(el('p', 'warn', err.message));
    }
  }

  $('bind-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const mode = e.target.querySelector('input[name="mode"]:checked')?.value ?? 'mention';
    await run('bind', { instanceId: $('bind-instance').value, mode });
    await loadBindings();
  });
  $('unbind-button').addEventListener('click', async () => {
    await run('unbind', {});
    await loadBindings();
  });
  $('refresh-instances').addEventListener('click', loadInstances);

  $('credential-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const valueField = $('cred-value');
    const value = valueField.value;
    // Cleared before the call: the value is never on the page again.
    valueField.value = '';
    const result = $('cred-result');
    result.replaceChildren(el('p', 'muted', 'Sending…'));
    await run('credential', { instanceId: $('cred-instance').value, key: $('cred-key').value.trim(), value }, result);
  });

  for (const button of document.querySelectorAll('[data-command]')) {
    button.addEventListener('click', () => run('command', { name: button.dataset.command }));
  }
  for (const form of document.querySelectorAll('form.setting')) {
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const setting = form.dataset.setting;
      const field = (name) => form.querySelector(`[name="${name}"]`).value;
      const value = setting === 'quota' ? `${field('name')} ${field('limit')}` : field('value');
      const select = form.querySelector('select[name="value"]');
      if (select) choosing.delete(select.id);
      await run('set', { setting, value });
      await loadBindings();
    });
  }

  let timer;
  const poll = async () => {
    if (document.visibilityState === 'visible') await Promise.all([loadQueue(), loadBindings()]);
    timer = setTimeout(poll, POLL_MS);
  };

  return {
    async start() {
      await loadInstances();
      await poll();
    },
    stop: () => clearTimeout(timer),
    channelChanged() {
      const b = bindingOf(getChannel().id);
      if (b) $('bind-instance').value = b.instanceId;
      renderBindingSummary();
      choosing.clear();
      showSettings();
      output.replaceChildren();
    },
    openCredentialForm(instanceId) {
      if (instances.some((i) => i.id === instanceId)) $('cred-instance').value = instanceId;
      $('credential-form').scrollIntoView({ block: 'center' });
      $('cred-key').focus();
    },
    refreshSoon: () => setTimeout(loadQueue, 300),
  };
}
