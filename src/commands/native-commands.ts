import type { FeedbackStore } from '../feedback/index.js';
import { formatFeedbackSummary } from '../feedback/index.js';
import { DM_CHANNEL } from '../bindings/dm.js';
import type { AgentAccounts } from '../accounts/agent-accounts.js';
import { MAX_SUGGESTED_PROMPTS, parsePromptList, type SuggestedPromptStore } from '../prompts/suggested-prompts.js';
import type { AuditWriter } from './binding-commands.js';
import { code, reply } from './format.js';
import type { CommandCaller, CommandReply } from './types.js';

export interface NativeCommandDeps {
  bindings: { get(platform: CommandCaller['platform'], channelId: string): Promise<unknown> };
  prompts?: SuggestedPromptStore;
  feedback?: FeedbackStore;
  commandName: string;
  /** What the platform calls a workspace (Discord: server). @defaultValue 'workspace' */
  workspaceNoun?: string;
  /** Whose account pays (AGENT_ACCOUNT_MODE): the deployment's, or each workspace's own. */
  accounts?: Pick<AgentAccounts, 'mode'>;
}

/**
 * `set prompts` (Slack's assistant suggested prompts for this channel's binding) and
 * `feedback` (votes on replies, last 7 days). Both work without their store configured: they
 * say so instead of failing.
 */
export function createNativeCommands(deps: NativeCommandDeps, audit: AuditWriter) {
  return {
    async setPrompts(caller: CommandCaller, value: string): Promise<CommandReply> {
      if (!deps.prompts) return reply(false, 'Setting not changed', ['Suggested prompts are not available here.']);
      if (!(await deps.bindings.get(caller.platform, caller.channelId))) {
        return reply(false, 'Setting not changed', [`This channel isn't connected to an agent: bind it first with ${code(`${deps.commandName} bind <instance-id>`)}.`]);
      }
      const reset = value.trim().toLowerCase() === 'default';
      const titles = reset ? [] : parsePromptList(value);
      if (!reset && titles.length === 0) {
        return reply(false, 'Setting not changed', [
          `Give up to ${MAX_SUGGESTED_PROMPTS} prompts separated by |, for example ${code('set prompts Summarise this channel | What changed this week?')}, or ${code('set prompts default')}.`,
        ]);
      }
      const saved = await deps.prompts.set(caller.platform, caller.channelId, titles);
      await audit(caller, { action: 'set', outcome: 'ok', detail: `prompts=${saved.length}` });
      if (saved.length === 0) return reply(true, 'Suggested prompts', ['The assistant suggests its default prompts again for this channel.']);
      // Slack shows at most four: say so rather than drop the rest unseen.
      const given = value.split('|').filter((t) => t.trim()).length;
      const dropped = given > saved.length ? [`Only the first ${MAX_SUGGESTED_PROMPTS} are kept; Slack shows at most ${MAX_SUGGESTED_PROMPTS}.`] : [];
      return reply(true, 'Suggested prompts', ['The assistant suggests these when a thread starts from this channel:', ...saved.map((t) => `• ${t}`), ...dropped]);
    },

    /**
     * Votes cast in the caller's workspace only: instances may be shared, their feedback is not.
     * Votes cast in DMs that belong to no workspace (Discord's, recorded under workspace `dm`)
     * could otherwise never be listed, since nobody is an admin there: with one shared account
     * they are the deployment's, so every workspace's admins see them, in a section of their own.
     */
    async feedback(caller: CommandCaller): Promise<CommandReply> {
      if (!deps.feedback) return reply(false, 'Feedback', ['Feedback is not recorded here.']);
      const rows = await deps.feedback.summary({ negatives: 5, workspace: { platform: caller.platform, workspaceId: caller.workspaceId } });
      const lines = formatFeedbackSummary(rows).split('\n');
      // Per-workspace accounts: DMs are answered by no one's account, and one workspace's admins must not see others' users.
      if (deps.accounts?.mode !== 'per-workspace' && caller.workspaceId !== DM_CHANNEL) {
        const inDms = await deps.feedback.summary({ negatives: 5, workspace: { platform: caller.platform, workspaceId: DM_CHANNEL } });
        const noun = deps.workspaceNoun ?? 'workspace';
        if (inDms.length > 0) {
          lines.push('', `In direct messages with the bot (they belong to no ${noun}, so every ${noun}'s admins see them):`, ...formatFeedbackSummary(inDms).split('\n').slice(1));
        }
      }
      return reply(true, 'Feedback', lines);
    },
  };
}
