import { dmBindingChannel } from '../../src/bindings/dm.js';
import type { CommandCaller } from '../../src/commands/types.js';

/**
 * The channel a command acts on. Slash commands in a DM with the bot act on the workspace's
 * DM binding (`dm:<team>`), which covers every direct message in that workspace (as the
 * ingress looks it up), and no other workspace's.
 */
export function bindingChannelOf(teamId: string, channelId: string, channelName?: string): string {
  return channelName === 'directmessage' || channelId.startsWith('D') ? dmBindingChannel(teamId) : channelId;
}

export function slackCaller(args: { teamId?: string; channelId: string; channelName?: string; userId: string; userName?: string }): CommandCaller {
  const workspaceId = args.teamId || 'unknown';
  return {
    platform: 'slack',
    workspaceId,
    channelId: bindingChannelOf(workspaceId, args.channelId, args.channelName),
    userId: args.userId,
    ...(args.userName ? { userName: args.userName.slice(0, 80) } : {}),
  };
}

/** The workspace (and Grid organisation) a view_submission came from, for the admin check. */
export function submittedIn(body: { team?: { id?: string } | null; enterprise?: { id?: string } | null; user?: { team_id?: string } }): { teamId?: string; enterpriseId?: string } {
  const teamId = body.team?.id || body.user?.team_id;
  const enterpriseId = body.enterprise?.id;
  return { ...(teamId ? { teamId } : {}), ...(enterpriseId ? { enterpriseId } : {}) };
}
