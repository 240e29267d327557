import type { CommandCaller } from '../../src/commands/types.js';

/**
 * The channel a command acts on. Slash commands in a DM with the bot act on the `dm`
 * binding, which covers every direct message (as the ingress looks it up).
 */
export function bindingChannelOf(channelId: string, channelName?: string): string {
  return channelName === 'directmessage' || channelId.startsWith('D') ? 'dm' : channelId;
}

export function slackCaller(args: { teamId?: string; channelId: string; channelName?: string; userId: string; userName?: string }): CommandCaller {
  return {
    platform: 'slack',
    workspaceId: args.teamId || 'unknown',
    channelId: bindingChannelOf(args.channelId, args.channelName),
    userId: args.userId,
    ...(args.userName ? { userName: args.userName.slice(0, 80) } : {}),
  };
}
