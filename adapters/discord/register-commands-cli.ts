/**
 * `npm run register-commands`: puts `/agent` and "Ask the agent" in place without starting the bridge.
 * Guild-scoped when DISCORD_GUILD_ID is set (instant), global otherwise (may take up to an hour
 * to reach every client). Reads the service's environment (and `.env`), but only Discord's
 * settings: registering needs the bot token, not the agent service's.
 */
import { ConfigError, readEnvironment } from '../../src/config/load.js';
import { registerCommands } from './commands/register.js';
import { COMMAND_NAME } from './commands/definition.js';
import { createRest } from './rest.js';
import { discordSettings } from './config.js';
import { scrub } from '../../src/core/scrub.js';

/** The settings' secrets (the token), kept out of whatever this prints: a service may quote it in an error. */
const secrets: string[] = [];

async function main(): Promise<number> {
  const { settings: discord, problems, secrets: given } = discordSettings.load(readEnvironment(), { role: 'ingress', encryptionKeySet: false, playground: false });
  secrets.push(...given);
  if (problems.length > 0) {
    console.error(new ConfigError(problems).message);
    return 2;
  }
  if (!discord) {
    console.error('DISCORD_TOKEN is missing: set it to the bot token from the Discord Developer Portal (Bot → Reset Token)');
    return 2;
  }
  const rest = createRest(discord);
  const result = await registerCommands(rest, { guildId: discord.guildId });
  const where = result.scope === 'guild' ? `in guild ${result.guildId} (available at once)` : 'globally (may take up to an hour to appear)';
  const names = result.names.map((n) => (n === COMMAND_NAME ? `/${n}` : `"${n}" (message menu)`)).join(' and ');
  console.log(`Registered ${names} for application ${result.applicationId} ${where}.`);
  if (Array.isArray(result.removedGlobal) && result.removedGlobal.length > 0) {
    console.log(`Removed the global copies left by a run without DISCORD_GUILD_ID: ${result.removedGlobal.join(', ')}.`);
  } else if (result.removedGlobal === 'unchecked') {
    console.log('Could not check for global copies of these commands (a run without DISCORD_GUILD_ID would leave them: the server would list /agent twice).');
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const status = (err as { status?: number }).status;
    const hint = status === 401 ? ' (DISCORD_TOKEN was refused: check it)' : '';
    console.error(scrub(`Command registration failed${hint}: ${err instanceof Error ? err.message : String(err)}`, secrets));
    process.exitCode = 1;
  },
);
