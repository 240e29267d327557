import { runPlainCommand } from '../../src/commands/dispatch.js';
import { parseCommandText } from '../../src/commands/parse.js';
import type { CommandCaller, CommandReply, Commands } from '../../src/commands/types.js';

/** What a typed `/agent …` command gives back to the page. */
export interface CommandTextResult {
  reply: CommandReply;
  /** `credential <id>`: the page opens its credential form for that instance instead. */
  credentialFormFor?: string;
}

/** Runs a command typed in the message box (`/agent why`), through the same Commands as Slack. */
export async function runCommandText(commands: Commands, caller: CommandCaller, text: string): Promise<CommandTextResult> {
  const parsed = parseCommandText(text);
  switch (parsed.name) {
    case 'credential':
      return {
        reply: {
          ok: true,
          title: 'Add a credential',
          lines: ['Use the credential form in the admin panel: the value goes to the agent service and is never shown again.'],
        },
        credentialFormFor: parsed.instanceId,
      };
    case 'invalid':
      return { reply: { ok: false, title: 'Not a command', lines: [parsed.error] } };
    default:
      return { reply: await runPlainCommand(commands, caller, parsed) };
  }
}
