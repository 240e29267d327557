import type { Adapter } from '../../../src/core/adapter.js';
import type { IncomingMessage } from '../../../src/core/message.js';
import type { PlatformEntry, PlatformModule } from '../../../src/core/platform-context.js';
import type { ReplyPort } from '../../../src/core/reply-port.js';
import type { CommandReply } from '../../../src/commands/types.js';
import { runPlainCommand } from '../../../src/commands/dispatch.js';
import { parseCommandText } from '../../../src/commands/parse.js';
import { webMessage } from '../pipeline.js';
import { echoSettings, type EchoConfig } from './config.js';

/** What the echo platform's users saw: replies and notices, in order. */
export const echoWall: Array<{ kind: 'chunk' | 'notice'; room: string; text: string }> = [];

let counter = 0;

/** The echo platform's ingress, reachable from a test: a user says something, an admin runs a command. */
export interface EchoAdapter extends Adapter {
  say(text: string, user?: string): Promise<unknown>;
  command(text: string): Promise<CommandReply>;
}
export let echoAdapter: EchoAdapter | undefined;

function echoPort(): ReplyPort {
  return {
    platform: 'echo',
    render: (markdown) => [markdown],
    postChunk: async (target, chunk) => void echoWall.push({ kind: 'chunk', room: target.channelId, text: chunk }),
    postNotice: async (target, text) => void echoWall.push({ kind: 'notice', room: target.channelId, text }),
  };
}

/**
 * A fourth platform written only against src/'s contracts (as adapters/<platform>/ would be):
 * proof that adding one touches nothing in src/, only the list in bin/platforms.ts.
 */
export const echoPlatform: PlatformModule = {
  platform: 'echo',
  vocabulary: () => ({ workspace: 'hall', command: '!agent' }),
  createReplyPort: () => echoPort(),
  createAdapter(ctx) {
    const settings = ctx.config.platforms.echo as EchoConfig;
    const caller = { platform: 'echo', workspaceId: 'hall1', channelId: settings.room, userId: 'admin1' };
    echoAdapter = {
      platform: 'echo',
      start: async () => {},
      stop: async () => {},
      say(text, user = 'u1') {
        // The shape any adapter's normaliser produces (the web one's, renamed): a mention in the room.
        const message: IncomingMessage = webMessage(text, {
          platform: 'echo',
          messageId: `e${++counter}`,
          channelId: settings.room,
          conversation: { platform: 'echo', workspaceId: 'hall1', channelId: settings.room },
          userId: user,
        });
        return ctx.ingress.handle(message);
      },
      async command(text) {
        const parsed = parseCommandText(text);
        if (parsed.name === 'invalid') return { ok: false, title: 'Invalid', lines: [parsed.error] };
        if (parsed.name === 'credential' || parsed.name === 'setup') return { ok: false, title: 'Not here', lines: ['Forms are not part of this test platform.'] };
        return runPlainCommand(ctx.commands, caller, parsed);
      },
    };
    return echoAdapter;
  },
};

export const echo: PlatformEntry = { settings: echoSettings, load: async () => echoPlatform };
