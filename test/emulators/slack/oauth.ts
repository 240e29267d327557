import { randomBytes } from 'node:crypto';
import type { SlackState } from './state.js';

/** One workspace (or Enterprise Grid org) the app is installed in, with its own bot token. */
export interface EmulatedInstall {
  teamId: string;
  teamName: string;
  enterpriseId?: string;
  isEnterpriseInstall: boolean;
  botToken: string;
  /** Set when the app has token rotation on (refresh_token / expires_in). */
  refreshToken?: string;
  expiresAt?: number;
  installerUserId: string;
}

export interface OAuthApp {
  clientId: string;
  clientSecret: string;
  /** Token rotation: tokens expire after this many seconds and come with a refresh token. */
  rotateAfterSeconds?: number;
}

interface PendingCode {
  install: Omit<EmulatedInstall, 'botToken'>;
  redirectUri?: string;
  scopes: string[];
  used: boolean;
}

/**
 * Slack's OAuth v2 as strict as Slack: the consent step (`approve`, which a test calls with
 * the authorize URL the app redirected to) issues a single-use code bound to the client ID
 * and redirect URI; `oauth.v2.access` exchanges it only with the right client secret and
 * the same redirect URI, and also refreshes rotating tokens (grant_type=refresh_token).
 */
export class OAuthServer {
  private readonly codes = new Map<string, PendingCode>();
  /** Installed workspaces by bot token (rotated tokens stay valid until they expire). */
  readonly installs = new Map<string, EmulatedInstall>();
  /** Every refresh is refused (`invalid_refresh_token`): a refresh token restored from an old backup. */
  refuseRefresh = false;
  /** Refresh tokens already exchanged: Slack revokes one once used, so a second use is refused. */
  private readonly usedRefreshTokens = new Set<string>();

  constructor(
    private readonly state: SlackState,
    readonly app: OAuthApp,
  ) {}

  /**
   * A user in `teamId` approves the install on Slack's consent page: returns where Slack
   * sends their browser (the app's redirect URI with `code` and `state`).
   */
  approve(authorizeUrl: string, o: { teamId: string; teamName?: string; enterpriseId?: string; orgWide?: boolean; userId?: string }): string {
    const url = new URL(authorizeUrl);
    if (url.searchParams.get('client_id') !== this.app.clientId) throw new Error('authorize: unknown client_id');
    const scopes = (url.searchParams.get('scope') ?? '').split(',').filter(Boolean);
    const missing = this.state.identity.scopes.filter((s) => !scopes.includes(s));
    if (missing.length) throw new Error(`authorize: the app asks for fewer scopes than the manifest (${missing.join(',')})`);
    const redirectUri = url.searchParams.get('redirect_uri') ?? undefined;
    const code = `code-${randomBytes(8).toString('hex')}`;
    this.codes.set(code, {
      install: {
        teamId: o.teamId,
        teamName: o.teamName ?? o.teamId,
        ...(o.enterpriseId ? { enterpriseId: o.enterpriseId } : {}),
        isEnterpriseInstall: o.orgWide === true,
        installerUserId: o.userId ?? 'UINSTALLER',
      },
      ...(redirectUri ? { redirectUri } : {}),
      scopes,
      used: false,
    });
    const back = new URL(redirectUri ?? 'http://redirect-uri-not-given.invalid/');
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') ?? '');
    return back.toString();
  }

  /** The installation a bot token belongs to (undefined: not one of the installs). */
  installFor(token: string): EmulatedInstall | undefined {
    const i = this.installs.get(token);
    if (!i) return undefined;
    return i.expiresAt !== undefined && i.expiresAt < Date.now() / 1000 ? undefined : i;
  }

  /** The app was removed from a workspace: its tokens stop working. */
  uninstall(teamOrEnterpriseId: string): void {
    for (const [token, i] of this.installs) if (i.teamId === teamOrEnterpriseId || i.enterpriseId === teamOrEnterpriseId) this.installs.delete(token);
  }

  /** oauth.v2.access: client credentials in the form body (or HTTP Basic), never a bearer token. */
  access(p: Record<string, string>, basic?: string): Record<string, unknown> {
    let clientId = p.client_id;
    let clientSecret = p.client_secret;
    if (basic) [clientId, clientSecret] = Buffer.from(basic, 'base64').toString().split(':');
    if (clientId !== this.app.clientId) return { ok: false, error: 'invalid_client_id' };
    if (clientSecret !== this.app.clientSecret) return { ok: false, error: 'bad_client_secret' };
    if (p.grant_type === 'refresh_token') {
      const refreshToken = p.refresh_token ?? '';
      const entry = [...this.installs.values()].find((i) => i.refreshToken && i.refreshToken === refreshToken);
      if (!entry || this.refuseRefresh || this.usedRefreshTokens.has(refreshToken)) return { ok: false, error: 'invalid_refresh_token' };
      this.usedRefreshTokens.add(refreshToken);
      const fresh = this.issue(entry);
      return { access_token: fresh.botToken, token_type: 'bot', refresh_token: fresh.refreshToken, expires_in: this.app.rotateAfterSeconds, scope: this.state.identity.scopes.join(',') };
    }
    const pending = p.code ? this.codes.get(p.code) : undefined;
    if (!pending || pending.used) return { ok: false, error: 'invalid_code' };
    if ((p.redirect_uri || undefined) !== pending.redirectUri) return { ok: false, error: 'bad_redirect_uri' };
    pending.used = true;
    const i = this.issue(pending.install);
    const id = this.state.identity;
    return {
      access_token: i.botToken,
      token_type: 'bot',
      scope: pending.scopes.join(','),
      bot_user_id: id.botUserId,
      app_id: id.appId,
      team: i.isEnterpriseInstall ? null : { id: i.teamId, name: i.teamName },
      enterprise: i.enterpriseId ? { id: i.enterpriseId, name: i.enterpriseId } : null,
      is_enterprise_install: i.isEnterpriseInstall,
      authed_user: { id: i.installerUserId },
      ...(i.refreshToken ? { refresh_token: i.refreshToken, expires_in: this.app.rotateAfterSeconds } : {}),
    };
  }

  private issue(install: Omit<EmulatedInstall, 'botToken'>): EmulatedInstall {
    const rotate = this.app.rotateAfterSeconds;
    const i: EmulatedInstall = {
      ...install,
      botToken: `xoxb-${install.isEnterpriseInstall ? install.enterpriseId : install.teamId}-${randomBytes(6).toString('hex')}`,
      ...(rotate ? { refreshToken: `xoxe-1-${randomBytes(8).toString('hex')}`, expiresAt: Math.floor(Date.now() / 1000) + rotate } : {}),
    };
    this.installs.set(i.botToken, i);
    return i;
  }
}
