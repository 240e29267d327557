import type { PlatformModule } from '../../src/core/platform-context.js';
import { createDiscordAdapter } from './adapter.js';
import { createDiscordReplyPort } from './reply-port.js';
import { DISCORD_WORKSPACE_NOUN } from './commands/definition.js';

export { createDiscordAdapter, MESSAGE_CONTENT_WARNING, type DiscordAdapter } from './adapter.js';
export { createDiscordReplyPort, DISCORD_MAX_CHARS } from './reply-port.js';
export { registerCommands } from './commands/register.js';
export { agentCommand } from './commands/definition.js';

/**
 * Discord as the composition root sees it: workers call `createReplyPort` (REST only), the
 * ingress process also `createAdapter` (one gateway connection, `/agent` commands).
 */
export const discordPlatform: PlatformModule = {
  platform: 'discord',
  vocabulary: () => ({ workspace: DISCORD_WORKSPACE_NOUN, command: '/agent', arguments: 'named' }),
  createReplyPort: (deps) => createDiscordReplyPort(deps),
  createAdapter: (ctx) => createDiscordAdapter(ctx),
};
