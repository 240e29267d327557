import type { FeedbackStore } from '../feedback/index.js';
import { formatFeedbackSummary } from '../feedback/index.js';
import { MAX_SUGGESTED_PROMPTS, parsePromptList, type SuggestedPromptStore } from '../prompts/suggested-prompts.js';
import type { AuditWriter } from './binding-commands.js';
import { code, reply } from './format.js';
import type { CommandCaller, CommandReply } from './types.js';

export interface NativeCommandDeps {
  bindings: { get(platform: CommandCaller['platform'], channelId: string): Promise<unknown> };
  prompts?: SuggestedPromptStore;
  feedback?: FeedbackStore;
  commandName: string;
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
      return reply(true, 'Suggested prompts', ['The assistant suggests these when a thread starts from this channel:', ...saved.map((t) => `• ${t}`)]);
    },

    /** Votes cast in the caller's workspace only: instances may be shared, their feedback is not. */
    async feedback(caller: CommandCaller): Promise<CommandReply> {
      if (!deps.feedback) return reply(false, 'Feedback', ['Feedback is not recorded here.']);
      const rows = await deps.feedback.summary({ negatives: 5, workspace: { platform: caller.platform, workspaceId: caller.workspaceId } });
      return reply(true, 'Feedback', formatFeedbackSummary(rows).split('\n'));
    },
  };
}
