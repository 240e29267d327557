import { PermissionFlagsBits, type Interaction } from 'discord.js';
import type { CommandCaller } from '../../../src/commands/types.js';

/** Role IDs of the member who ran the interaction, however discord.js holds the member. */
function memberRoleIds(interaction: Interaction): string[] {
  const member = interaction.member;
  if (!member) return [];
  if (Array.isArray(member.roles)) return member.roles;
  // `roles.cache` only lists roles the guild cache knows; `_roles` holds the raw IDs.
  const raw = (member as unknown as { _roles?: unknown })._roles;
  const fromRaw = Array.isArray(raw) ? raw.filter((r): r is string => typeof r === 'string') : [];
  // `roles.cache` also holds @everyone, whose ID is the server's: every member has it, so it
  // never makes one an admin (DISCORD_ADMIN_ROLE_IDS holding the server ID by mistake).
  return [...new Set([...member.roles.cache.keys(), ...fromRaw])].filter((id) => id !== interaction.guildId);
}

/**
 * Whether this server installed the app (the bot's invite), rather than only the user who ran
 * the command: an app added to a user's account ("Add App") brings its commands to every server
 * that user is in, the bot a member there or not, with the user's own permissions there.
 * Discord names the installs that authorised the interaction in `authorizing_integration_owners`.
 */
export function installedInGuild(interaction: Interaction): boolean {
  return interaction.inGuild() && interaction.authorizingIntegrationOwners.guildId === interaction.guildId;
}

/**
 * An admin has Manage Server (or Administrator) in this guild, or one of DISCORD_ADMIN_ROLE_IDS.
 * Nobody is an admin outside a guild, nor in one that did not install the app.
 */
export function isAdmin(interaction: Interaction, adminRoleIds: readonly string[]): boolean {
  if (!installedInGuild(interaction)) return false;
  if (interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) === true) return true;
  if (adminRoleIds.length === 0) return false;
  const roles = memberRoleIds(interaction);
  return adminRoleIds.some((id) => roles.includes(id));
}

/** Who ran the interaction, and where. A thread counts as its parent channel (bindings live there). */
export function callerOf(interaction: Interaction): CommandCaller {
  const channel = interaction.channel;
  const channelId =
    channel && channel.isThread() && channel.parentId ? channel.parentId : (interaction.channelId ?? 'unknown');
  const member = interaction.member;
  const displayName = member && 'displayName' in member ? member.displayName : undefined;
  return {
    platform: 'discord',
    workspaceId: interaction.guildId ?? 'dm',
    channelId: interaction.guildId ? channelId : 'dm',
    userId: interaction.user.id,
    userName: displayName ?? interaction.user.globalName ?? interaction.user.username,
  };
}
