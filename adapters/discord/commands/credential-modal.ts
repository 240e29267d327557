import { LabelBuilder, ModalBuilder, TextInputBuilder, TextInputStyle } from 'discord.js';

/** custom_id of the modal: prefix + instance ID (Discord allows 100 characters in all). */
export const CREDENTIAL_MODAL_PREFIX = 'agent:credential:';
export const MAX_MODAL_INSTANCE_ID = 100 - CREDENTIAL_MODAL_PREFIX.length;
export const KEY_FIELD = 'key';
export const VALUE_FIELD = 'value';

function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/** The private form an admin types a credential into; the value never appears in a channel. */
export function credentialModal(instanceId: string): ModalBuilder {
  return new ModalBuilder()
    .setCustomId(`${CREDENTIAL_MODAL_PREFIX}${instanceId}`)
    .setTitle(clip(`Credential for ${instanceId}`, 45))
    .addLabelComponents(
      new LabelBuilder()
        .setLabel('Key')
        .setDescription('The name the agent knows it by, for example GITHUB_TOKEN')
        .setTextInputComponent(
          new TextInputBuilder().setCustomId(KEY_FIELD).setStyle(TextInputStyle.Short).setRequired(true).setMaxLength(200),
        ),
      new LabelBuilder()
        .setLabel('Value')
        .setDescription('Sent straight to the agent service; never stored or shown here')
        .setTextInputComponent(
          new TextInputBuilder().setCustomId(VALUE_FIELD).setStyle(TextInputStyle.Paragraph).setRequired(true).setMaxLength(4000),
        ),
    );
}

/** The instance ID carried in a credential modal's custom_id, or undefined for another modal. */
export function instanceFromModalId(customId: string): string | undefined {
  if (!customId.startsWith(CREDENTIAL_MODAL_PREFIX)) return undefined;
  const id = customId.slice(CREDENTIAL_MODAL_PREFIX.length);
  return id.length > 0 ? id : undefined;
}

/** custom_id of the `/agent setup` modal (per-workspace agent accounts). */
export const SETUP_MODAL_ID = 'agent:setup';
export const API_KEY_FIELD = 'api_key';
export const SESSION_FIELD = 'session';

/** The private form for this server's own agent-service account; nothing typed here is shown again. */
export function setupModal(): ModalBuilder {
  return new ModalBuilder()
    .setCustomId(SETUP_MODAL_ID)
    .setTitle('Agent account for this server')
    .addLabelComponents(
      new LabelBuilder()
        .setLabel('API key')
        .setDescription("This server's messages are billed to it; checked, stored encrypted")
        .setTextInputComponent(new TextInputBuilder().setCustomId(API_KEY_FIELD).setStyle(TextInputStyle.Short).setRequired(true).setMaxLength(4000)),
      new LabelBuilder()
        .setLabel('Dashboard session (optional)')
        .setDescription('Needed only to add credentials to instances')
        .setTextInputComponent(new TextInputBuilder().setCustomId(SESSION_FIELD).setStyle(TextInputStyle.Paragraph).setRequired(false).setMaxLength(4000)),
    );
}
