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
