/**
 * The subset of Block Kit validation Slack applies to what the bot sends: message blocks
 * (chat.postMessage, chat.postEphemeral, response_url) and modal views (views.open/update).
 * Returns the problem, or undefined when Slack would accept it.
 */

type Json = Record<string, unknown>;

const BLOCK_TYPES = new Set(['section', 'context', 'context_actions', 'divider', 'header', 'actions', 'image', 'input', 'rich_text', 'markdown']);

function textObject(t: unknown, max: number, where: string, plainOnly = false): string | undefined {
  if (!t || typeof t !== 'object') return `${where}: missing text object`;
  const o = t as Json;
  if (o.type !== 'plain_text' && (plainOnly || o.type !== 'mrkdwn')) return `${where}: text type must be ${plainOnly ? 'plain_text' : 'plain_text or mrkdwn'}`;
  if (typeof o.text !== 'string' || o.text.length === 0) return `${where}: text must be a non-empty string`;
  if (o.text.length > max) return `${where}: text longer than ${max}`;
  return undefined;
}

function block(b: unknown, i: number, inModal: boolean): string | undefined {
  const where = `blocks[${i}]`;
  if (!b || typeof b !== 'object') return `${where}: not an object`;
  const o = b as Json;
  if (typeof o.type !== 'string' || !BLOCK_TYPES.has(o.type)) return `${where}: unknown type ${String(o.type)}`;
  if (o.block_id !== undefined && (typeof o.block_id !== 'string' || o.block_id.length > 255)) return `${where}: bad block_id`;
  switch (o.type) {
    case 'section':
      if (o.text === undefined && !Array.isArray(o.fields)) return `${where}: section needs text or fields`;
      return o.text === undefined ? undefined : textObject(o.text, 3000, where);
    case 'header':
      return textObject(o.text, 150, where, true);
    case 'context': {
      const els = o.elements;
      if (!Array.isArray(els) || els.length === 0 || els.length > 10) return `${where}: context needs 1-10 elements`;
      for (const el of els) {
        const p = textObject(el, 3000, where);
        if (p) return p;
      }
      return undefined;
    }
    case 'context_actions':
      return contextActions(o, where);
    case 'input': {
      if (!inModal) return `${where}: input blocks belong in modals`;
      const p = textObject(o.label, 2000, `${where}.label`, true);
      if (p) return p;
      const el = o.element as Json | undefined;
      if (!el || typeof el.type !== 'string') return `${where}: input needs an element`;
      if (typeof el.action_id !== 'string' || !el.action_id) return `${where}: element needs action_id`;
      if (el.max_length !== undefined && (typeof el.max_length !== 'number' || el.max_length > 3000)) return `${where}: max_length above 3000`;
      if (o.hint !== undefined) return textObject(o.hint, 2000, `${where}.hint`, true);
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Slack's AI feedback row: 1-5 elements, `feedback_buttons` or `icon_button`. */
function contextActions(o: Json, where: string): string | undefined {
  const els = o.elements;
  if (!Array.isArray(els) || els.length === 0 || els.length > 5) return `${where}: context_actions needs 1-5 elements`;
  for (const el of els as Json[]) {
    if (el?.type === 'icon_button') continue;
    if (el?.type !== 'feedback_buttons') return `${where}: context_actions element must be feedback_buttons or icon_button`;
    if (typeof el.action_id !== 'string' || !el.action_id || el.action_id.length > 255) return `${where}: feedback_buttons needs action_id`;
    for (const side of ['positive_button', 'negative_button'] as const) {
      const b = el[side] as Json | undefined;
      if (!b || typeof b !== 'object') return `${where}: feedback_buttons needs ${side}`;
      const t = textObject(b.text, 75, `${where}.${side}`, true);
      if (t) return t;
      if (typeof b.value !== 'string' || !b.value || b.value.length > 2000) return `${where}.${side}: value must be 1-2000 characters`;
    }
  }
  return undefined;
}

/** What Slack takes, in all, in the text of one message's blocks. */
export const MAX_MESSAGE_BLOCKS_TEXT = 13_200;

/** Characters of every `text` string in the blocks. */
function textLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + textLength(v), 0);
  if (!value || typeof value !== 'object') return 0;
  return Object.entries(value as Json).reduce((n, [k, v]) => n + (k === 'text' && typeof v === 'string' ? v.length : textLength(v)), 0);
}

/** `blocks` as sent in a form (a JSON string) or a JSON body (an array). */
export function validateBlocks(raw: unknown, inModal = false): { error: string; detail?: string } | undefined {
  let blocks: unknown = raw;
  if (typeof raw === 'string') {
    try {
      blocks = JSON.parse(raw);
    } catch {
      return { error: 'invalid_blocks_format' };
    }
  }
  if (!Array.isArray(blocks)) return { error: 'invalid_blocks_format' };
  if (blocks.length > (inModal ? 100 : 50)) return { error: 'invalid_blocks', detail: 'too many blocks' };
  // Undocumented, but Slack refuses a message whose blocks hold more than about 13,000
  // characters of text in all (slackapi/bolt-js#2509: 13,297 with markdown blocks).
  if (!inModal && textLength(blocks) > MAX_MESSAGE_BLOCKS_TEXT) return { error: 'msg_blocks_too_long' };
  for (let i = 0; i < blocks.length; i++) {
    const p = block(blocks[i], i, inModal);
    if (p) return { error: 'invalid_blocks', detail: p };
  }
  return undefined;
}

/** A modal view for views.open / views.update. */
export function validateView(raw: unknown): { view?: Json; error?: string; detail?: string } {
  let view: unknown = raw;
  if (typeof raw === 'string') {
    try {
      view = JSON.parse(raw);
    } catch {
      return { error: 'invalid_arguments', detail: 'view is not JSON' };
    }
  }
  if (!view || typeof view !== 'object') return { error: 'invalid_arguments', detail: 'view missing' };
  const v = view as Json;
  if (v.type !== 'modal') return { error: 'invalid_arguments', detail: 'view.type must be modal' };
  const problem =
    textObject(v.title, 24, 'title', true) ??
    (v.submit !== undefined ? textObject(v.submit, 24, 'submit', true) : undefined) ??
    (v.close !== undefined ? textObject(v.close, 24, 'close', true) : undefined);
  if (problem) return { error: 'invalid_arguments', detail: problem };
  if (typeof v.private_metadata === 'string' && v.private_metadata.length > 3000) return { error: 'invalid_arguments', detail: 'private_metadata over 3000' };
  if (typeof v.callback_id === 'string' && v.callback_id.length > 255) return { error: 'invalid_arguments', detail: 'callback_id over 255' };
  const blocks = validateBlocks(v.blocks, true);
  if (blocks) return { error: 'invalid_arguments', detail: blocks.detail ?? blocks.error };
  const hasInput = (v.blocks as Json[]).some((b) => b.type === 'input');
  if (hasInput && v.submit === undefined) return { error: 'invalid_arguments', detail: 'a view with inputs needs submit' };
  return { view: v };
}
