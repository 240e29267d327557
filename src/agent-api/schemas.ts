import { z } from 'zod';

/*
 * Response bodies of the agent service (../shared/agent-chat-api.md §2, §4). Only the spec's
 * fields are checked; z.object is not strict, so fields the spec does not name are tolerated
 * (and dropped from the parsed value).
 */

export const instanceSchema = z.object({
  id: z.string(),
  name: z.string(),
  status: z.string(),
  type: z.string(),
});

export const instanceListSchema = z.array(instanceSchema);

export const chatReplySchema = z.object({
  response: z.string(),
  // Only logs and feedback buttons use it: an answer without a usable one (billed all the same)
  // is still the answer, posted without feedback buttons.
  messageId: z.string().optional().catch(undefined),
});

export const credentialResultSchema = z.object({
  success: z.boolean(),
  key: z.string(),
});

/** A short, value-free summary of why a body did not match (zod messages name types, never values). */
export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.slice(0, 3).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    return `${path}: ${issue.message}`;
  });
  if (error.issues.length > 3) parts.push(`and ${error.issues.length - 3} more`);
  return parts.join('; ');
}
