import { Routes, type APIApplication } from 'discord-api-types/v10';
import type { REST } from '@discordjs/rest';
import { agentCommand, askAgentCommand } from './definition.js';

export interface RegisterResult {
  scope: 'guild' | 'global';
  applicationId: string;
  guildId?: string;
  names: string[];
}

/**
 * Puts `/agent` and "Ask the agent" in place with one bulk overwrite: guild-scoped when a guild ID is given
 * (updates at once, for development and single-server installs), global otherwise.
 */
export async function registerCommands(
  rest: Pick<REST, 'get' | 'put'>,
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
    ...(options.guildId ? { guildId: options.guildId } : {}),
    names: saved.map((c) => c.name),
  };
}

/**
 * `contexts` and `integration_types` are only for globally-scoped commands (Discord's API
 * reference); a guild's commands live in that guild anyway, so they are left out there.
 */
function withoutGlobalOnlyFields<T extends { contexts?: unknown; integration_types?: unknown }>(command: T): Omit<T, 'contexts' | 'integration_types'> {
  const { contexts: _contexts, integration_types: _integrationTypes, ...rest } = command;
  return rest;
}
