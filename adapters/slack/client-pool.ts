import type { AnyMiddlewareArgs, App, Context, Middleware } from '@slack/bolt';

/** Bolt's own record of the WebClients it made: one pool per team (or enterprise), one client per token. */
interface BoltClientPools {
  clients?: Record<string, { pool?: Record<string, unknown> } | undefined>;
}

const poolsOf = (app: App) => (app as unknown as BoltClientPools).clients ?? {};

/** The key Bolt files a request's client under (App.processEvent: the team, else the enterprise). */
const poolKey = (context: Context) => context.teamId ?? context.enterpriseId;

/**
 * "Add to Slack" with rotating tokens: Bolt makes a WebClient for each bot token a request is
 * authorized with and keeps it for the life of the process, never dropping one whose token was
 * rotated away (Slack's tokens last 12 hours, InstallProvider refreshes them 2 hours before, so
 * about 2.4 a day per workspace, each client some 26 KB: a thousand workspaces leak about 60 MB
 * a day). This middleware leaves the pool of the request's installation with the client it was
 * given only.
 */
export function keepCurrentClientOnly(app: App): Middleware<AnyMiddlewareArgs> {
  return async ({ client, context, next }) => {
    const key = poolKey(context);
    const pool = key === undefined ? undefined : poolsOf(app)[key]?.pool;
    if (pool && client.token) {
      for (const token of Object.keys(pool)) if (token !== client.token) delete pool[token];
    }
    await next();
  };
}

/** The WebClients Bolt keeps now, over every installation (observability and tests). */
export function boltClientCount(app: App): number {
  return Object.values(poolsOf(app)).reduce((n, p) => n + Object.keys(p?.pool ?? {}).length, 0);
}
