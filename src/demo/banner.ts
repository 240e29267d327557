/** Printed when `npm start` runs with no configuration. */
export function demoBanner(url: string): string {
  const line = '─'.repeat(66);
  return `
${line}
  agent-bridge DEMO: no configuration found, so this is the local playground
  with a built-in demo agent (not a real agent service).

  Open ${url} to bind a channel, chat, and try the admin tools.

  To run for real, copy .env.example to .env and set:
    AGENT_API_BASE_URL, AGENT_API_KEY       the agent service
    SLACK_BOT_TOKEN + SLACK_SIGNING_SECRET   Slack over HTTP (or SLACK_APP_TOKEN: Socket Mode)
    DISCORD_TOKEN                            Discord
  See README.md for the whole setup.
${line}
`;
}
