import type { App } from '@slack/bolt';
import type { View } from '@slack/web-api';
import { escapeSlackText } from './escape.js';

/** The action ID of every input of the bridge's forms (each input is its own block). */
export const INPUT_ACTION = 'input';

/** Plain text cut to Slack's limit for its place. */
export const plain = (text: string, max: number) => ({ type: 'plain_text' as const, text: text.slice(0, max) });

/** One plain-text input in a block of its own. */
export interface TextInput {
  blockId: string;
  label: string;
  hint?: string;
  optional?: boolean;
  maxLength: number;
  placeholder?: string;
}

/** A form: a title, Save and Cancel, a line of explanation (mrkdwn, as given), then its inputs. */
export function formModal(form: { callbackId: string; metadata: string; title: string; intro: string; inputs: readonly TextInput[] }): View {
  return {
    type: 'modal',
    callback_id: form.callbackId,
    private_metadata: form.metadata,
    title: plain(form.title, 24),
    submit: plain('Save', 24),
    close: plain('Cancel', 24),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: form.intro } },
      ...form.inputs.map((input) => ({
        type: 'input' as const,
        block_id: input.blockId,
        ...(input.optional ? { optional: true } : {}),
        label: plain(input.label, 2000),
        ...(input.hint ? { hint: plain(input.hint, 2000) } : {}),
        element: {
          type: 'plain_text_input' as const,
          action_id: INPUT_ACTION,
          max_length: input.maxLength,
          ...(input.placeholder ? { placeholder: plain(input.placeholder, 150) } : {}),
        },
      })),
    ],
  };
}

/** What a form shows once submitted: one message (escaped) and Close. Its callback is `<form>_done`. */
export function messageView(formCallbackId: string, title: string, text: string): View {
  return {
    type: 'modal',
    callback_id: `${formCallbackId}_done`,
    title: plain(title, 24),
    close: plain('Close', 24),
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: escapeSlackText(text).slice(0, 3000) || ' ' } }],
  };
}

/** Acknowledges the submission of a form's message view (`<form>_done`), which only closes it. */
export function registerMessageView(app: App, formCallbackId: string): void {
  app.view({ callback_id: `${formCallbackId}_done`, type: 'view_submission' }, async ({ ack }) => {
    await ack();
  });
}
