import { runPlainCommand } from '../../src/commands/dispatch.js';
import { parseCommandText } from '../../src/commands/parse.js';
import { findCommand } from '../../src/commands/registry.js';
import type { CommandCaller, CommandReply, Commands } from '../../src/commands/types.js';

/** What a typed `/agent …` command gives back to the page. */
export interface CommandTextResult {
  reply: CommandReply;
  /** `credential <id>`: the page opens its credential form for that instance instead. */
  credentialFormFor?: string;
}

/** Runs a command typed in the message box (`/agent why`), through the same Commands as Slack. */
export async function runCommandText(commands: Commands, caller: CommandCaller, text: string): Promise<CommandTextResult> {
  // With or without the command's own name: `/agent why` as typed, or `why`.
  const parsed = parseCommandText(text.replace(/^\s*\/agent(?=\s|$)\s*/i, ''));
  switch (parsed.name) {
    case 'credential': {
      const cannot = await commands.credentialForm?.(caller);
      if (cannot) return { reply: cannot };
      const known = await commands.cachedInstances().catch(() => undefined);
      if (known && !known.some((i) => i.id === parsed.instanceId)) {
        return {
          reply: {
            ok: false,
            title: 'Unknown instance',
            lines: [
              known.length
                ? `There is no instance \`${parsed.instanceId}\`. Known instances: ${known.map((i) => `\`${i.id}\``).join(', ')}.`
                : `There is no instance \`${parsed.instanceId}\`: the account has no instances.`,
            ],
          },
        };
      }
      return {
        reply: {
          ok: true,
          title: 'Add a credential',
          lines: ['Use the credential form in the admin panel: the value goes to the agent service and is never shown again.'],
        },
        credentialFormFor: parsed.instanceId,
      };
    }
    case 'setup':
      if (commands.accountMode !== 'per-workspace') return { reply: await commands.setup(caller, '') };
      // The key is never typed into the chat: it goes to POST /playground/api/setup.
      return {
        reply: {
          ok: true,
          title: 'Agent account',
          lines: ["Send this workspace's API key to `POST /playground/api/setup` (`{ channel, apiKey, session? }`): a key typed here would be in the chat."],
        },
      };
    case 'invalid':
      return { reply: { ok: false, title: invalidTitle(text), lines: [parsed.error] } };
    default:
      return { reply: await runPlainCommand(commands, caller, parsed) };
  }
}

/** A known command (any name or alias in the command table) with a wrong argument is not "not a command". */
function invalidTitle(text: string): string {
  const entry = findCommand(text.trim().split(/\s+/)[0] ?? '');
  if (!entry) return 'Not a command';
  return entry.name === 'set' ? 'Not a valid value' : 'Check the command';
}
