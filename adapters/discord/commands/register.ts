import { Routes, type APIApplication } from 'discord-api-types/v10';
import type { REST } from '@discordjs/rest';
import { agentCommand, askAgentCommand, ASK_COMMAND_NAME, COMMAND_NAME } from './definition.js';

export interface RegisterResult {
  scope: 'guild' | 'global';
  applicationId: string;
  guildId?: string;
  names: string[];
  /**
   * Guild scope: this bridge's commands removed from the global scope (an earlier run without
   * DISCORD_GUILD_ID), or `unchecked` when that look-up failed (the guild's commands are in place).
   */
  removedGlobal?: string[] | 'unchecked';
}

/**
 * Puts `/agent` and "Ask the agent" in place with one bulk overwrite: guild-scoped when a guild ID is given
 * (updates at once, for development and single-server installs), global otherwise.
 */
export async function registerCommands(
  rest: Pick<REST, 'get' | 'put' | 'delete'>,
  options: { applicationId?: string; guildId?: string; signal?: AbortSignal },
): Promise<RegisterResult> {
  // Aborting keeps a request waiting out a 429 from being sent after all (at shutdown).
  const request = options.signal ? { signal: options.signal } : {};
  const applicationId = options.applicationId ?? ((await rest.get(Routes.oauth2CurrentApplication(), request)) as APIApplication).id;
  const commands = [agentCommand(), askAgentCommand()];
  const body = options.guildId ? commands.map(withoutGlobalOnlyFields) : commands;
  const route = options.guildId
    ? Routes.applicationGuildCommands(applicationId, options.guildId)
    : Routes.applicationCommands(applicationId);
  const saved = (await rest.put(route, { body, ...request })) as Array<{ name: string }>;
  return {
    scope: options.guildId ? 'guild' : 'global',
    applicationId,
    ...(options.guildId ? { guildId: options.guildId, removedGlobal: await removeGlobalCopies(rest, applicationId, request) } : {}),
    names: saved.map((c) => c.name),
  };
}

/**
 * Discord shows a guild both its own commands and the global ones, same names included: after
 * a run without DISCORD_GUILD_ID, the server would list `/agent` twice, one of them stale. Only
 * this bridge's names are removed; the application's other global commands stay.
 */
async function removeGlobalCopies(rest: Pick<REST, 'get' | 'delete'>, applicationId: string, request: { signal?: AbortSignal }): Promise<string[] | 'unchecked'> {
  try {
    const global = (await rest.get(Routes.applicationCommands(applicationId), request)) as Array<{ id: string; name: string }>;
    const ours = global.filter((c) => c.name === COMMAND_NAME || c.name === ASK_COMMAND_NAME);
    for (const c of ours) await rest.delete(Routes.applicationCommand(applicationId, c.id), request);
    return ours.map((c) => c.name);
  } catch {
    return 'unchecked';
  }
}

/**
 * `contexts` and `integration_types` are only for globally-scoped commands (Discord's API
 * reference); a guild's commands live in that guild anyway, so they are left out there.
 */
function withoutGlobalOnlyFields<T extends { contexts?: unknown; integration_types?: unknown }>(command: T): Omit<T, 'contexts' | 'integration_types'> {
  const { contexts: _contexts, integration_types: _integrationTypes, ...rest } = command;
  return rest;
}
