//! The command line of `latchkey` (clap only; no behaviour here).
//!
//! The doc comments below are the commands' `--help` text (clap reads them), written for a
//! terminal, not for rustdoc: `[smtp]`, `<TAB>` and bare URLs mean what they say there.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags, rustdoc::bare_urls)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `latchkey --version`: the release and the commit it was built from (`-V` and the man page
/// show the release alone; `latchkey status` shows the daemon's).
pub fn long_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| format!("{} (commit {COMMIT})", latchkey::VERSION))
}

/// The commit this binary was built from (`build/commit.rs`), or "unknown".
pub const COMMIT: &str = env!("LATCHKEY_COMMIT");

#[derive(Debug, Parser)]
#[command(
    name = "latchkey",
    version,
    long_version = long_version(),
    about = "Manage a Latchkey identity daemon: tenants, applications, signing keys",
    long_about = "Manage a Latchkey identity daemon: tenants, applications, signing keys.\n\n\
        Every command is a call to the daemon's local admin socket; nothing here opens the database. \
        Run it as root or as the daemon's user.",
    after_help = "Examples:\n  \
        latchkey tenant create acme\n  \
        latchkey app create --tenant acme --name Portal --type web --redirect-uri https://portal.acme.com/oidc-callback\n  \
        latchkey key rotate --tenant acme\n  \
        latchkey tenant list -o json | jq -r '.[].issuer'\n\n\
        Exit codes:\n  \
        0  done\n  \
        1  the daemon refused (its message on stderr), answered something this CLI does not understand,\n     \
           or writing a file failed after the daemon acted\n  \
        2  usage error, or a file named on the command line cannot be used (nothing was sent)\n  \
        3  the daemon cannot be reached (socket missing, permission denied) or went away before answering"
)]
pub struct Cli {
    /// Admin socket of the daemon. Default: ./latchkey-data/admin.sock if it exists, else
    /// admin.socket of the daemon's config file ($LATCHKEY_CONFIG, else
    /// /etc/latchkey/config.toml), else /run/latchkey/admin.sock.
    #[arg(long, global = true, env = "LATCHKEY_ADMIN_SOCKET", value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Output format: tables for people, JSON for scripts.
    #[arg(short, long, global = true, value_enum, default_value_t = Format::Table)]
    pub output: Format,

    /// Print no tables, confirmations, hints or progress: only errors (on stderr) and what is
    /// shown once and lost otherwise, one per line: `app create` its client id and client
    /// secret, `app rotate-secret` the secret, `user invite|recover` the link, `user reinvite`
    /// EMAIL<TAB>LINK for links neither e-mailed nor saved, `apply` TENANT<TAB>APP<TAB>CLIENT
    /// ID<TAB>SECRET for new confidential apps, `scim enable|rotate-token` the token, `webhook add`
    /// the generated secret (or the id, when the secret came from a file). `-o json` prints its
    /// document regardless.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show whether the daemon is up, its version, listener and tenant count.
    Status,
    /// Create, list, inspect and delete tenants (one issuer each).
    #[command(subcommand)]
    Tenant(TenantCmd),
    /// Register OpenID Connect client applications and manage their secrets.
    #[command(subcommand)]
    App(AppCmd),
    /// List, rotate and retire a tenant's token-signing keys.
    #[command(subcommand)]
    Key(KeyCmd),
    /// Invite and import users, list them, disable, enable or delete them, and issue recovery links.
    #[command(subcommand)]
    User(UserCmd),
    /// List and revoke a user's passkeys and security keys.
    #[command(subcommand)]
    Credential(CredentialCmd),
    /// Create roles and assign them to users; they appear in the `roles` claim of tokens.
    #[command(subcommand)]
    Role(RoleCmd),
    /// Sign-in with Google, GitHub or any OpenID Connect provider, per tenant.
    #[command(subcommand)]
    Social(SocialCmd),
    /// Create or update tenants, roles, applications and social providers from a TOML file
    /// (idempotent: a second run changes nothing). What the file leaves out is never deleted; what
    /// it names is set to the file's values (an app's lists are replaced by the file's lists). The
    /// plan shows each changed field, old → new. New confidential apps' secrets are printed once.
    #[command(
        after_help = "File format (export writes the same):\n\n  [[tenant]]\n  slug = \"acme\"\n  name = \"Acme\"\n  registration = \"invite\"\n\n  \
        [[tenant.role]]\n  name = \"admin\"\n  description = \"Administrators\"\n\n  [[tenant.app]]\n  name = \"Portal\"\n  type = \"web\"\n  \
        redirect_uris = [\"https://portal.acme.com/oidc-callback\"]\n\n  [[tenant.social]]\n  kind = \"github\"\n  client_id = \"Iv1.abc\"\n  \
        client_secret_file = \"github.secret\"\n\nExamples:\n  latchkey apply -f latchkey.toml --dry-run\n  latchkey export --tenant acme > acme.toml"
    )]
    Apply {
        /// The declarative configuration file.
        #[arg(short = 'f', long = "file", value_name = "FILE.toml")]
        file: std::path::PathBuf,
        /// Print the plan; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Let an enterprise directory (Microsoft Entra ID, Okta) provision a tenant's users and
    /// groups over SCIM 2.0.
    #[command(subcommand)]
    Scim(ScimCmd),
    /// Send a tenant's audit events (user.invite, login, token grants, admin changes) to other
    /// systems as signed webhooks (Standard Webhooks), in order, retried for 24 hours.
    #[command(subcommand)]
    Webhook(WebhookCmd),
    /// Import the FIDO Metadata Service BLOB that tenants with `--attestation-policy verified`
    /// check authenticators against, and show the one in force.
    #[command(subcommand)]
    Mds(MdsCmd),
    /// Print a tenant's tenants/roles/apps configuration in the `apply` format (no secrets).
    Export {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Read the audit log: sign-ins, registrations, credential changes, token grants, and every
    /// admin change (typed actions such as app.create, user.disable, key.retire, with the socket
    /// peer's uid as actor). Without --tenant: every tenant's events and the daemon-wide ones.
    #[command(after_help = "Examples:\n  latchkey audit --since 1h\n  latchkey audit --tenant acme --since 1h\n  \
            latchkey audit --tenant acme --user ada@acme.com --follow\n  \
            latchkey audit --since 2026-11-01T00:00:00Z --until 2026-12-01T00:00:00Z --action 'role.*'\n  \
            latchkey audit --tenant acme --outcome failure --app CLIENT_ID --limit 50")]
    Audit(AuditArgs),
    /// Write a consistent online copy of the database to FILE (a new file, mode 0600). Back up the
    /// key-encryption key file separately: the copy's signing keys are sealed with it.
    Backup {
        /// Where to write the copy; must not exist yet.
        file: std::path::PathBuf,
    },
    /// Print a shell completion script: `latchkey completions bash > /etc/bash_completion.d/latchkey`.
    Completions {
        /// The shell to write the script for.
        #[arg(value_enum)]
        shell: Shell,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Subcommand)]
pub enum WebhookCmd {
    /// Subscribe a URL to a tenant's events. Each matching audit event is POSTed as JSON
    /// ({"type", "timestamp", "data"}) with webhook-id, webhook-timestamp and webhook-signature
    /// headers (HMAC-SHA256 of the secret). Without --secret-file a secret is generated and
    /// printed once.
    #[command(
        after_help = "Examples:\n  latchkey webhook add --tenant acme --url https://hooks.acme.com/latchkey --events 'user.*'\n  \
        latchkey webhook add --tenant acme --url https://hooks.acme.com/in --events 'user.*' 'role.*' \\\n      \
        --secret-file hook.secret     # whsec_…, as the receiver's library expects\n  \
        latchkey webhook add --tenant acme --url https://siem.acme.com/in --events '*' -q > hook.secret"
    )]
    Add {
        #[command(flatten)]
        tenant: TenantArg,
        /// Where to POST: https, or plain http on this machine (127.0.0.1, ::1, localhost).
        #[arg(long)]
        url: String,
        /// Audit actions to send, as globs: user.invite, 'user.*', 'token.*', '*' for all.
        #[arg(long, num_args = 1.., required = true, value_name = "GLOB")]
        events: Vec<String>,
        /// A file holding the secret (whsec_ and base64 of 24–64 bytes), or - for standard
        /// input. Never on the command line.
        #[arg(long, value_name = "FILE")]
        secret_file: Option<std::path::PathBuf>,
    },
    /// List a tenant's webhooks with their deliveries waiting.
    List {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Remove a webhook and its deliveries, pending ones included.
    Remove {
        #[command(flatten)]
        tenant: TenantArg,
        /// The webhook's id (see `webhook list`).
        id: i64,
        /// Confirm the removal.
        #[arg(long)]
        yes: bool,
    },
    /// List deliveries, newest first: pending, retrying, delivered (kept a week) or failed
    /// (given up after 24 hours of retries; kept a week).
    #[command(after_help = "Examples:\n  latchkey webhook deliveries --tenant acme\n  \
        latchkey webhook deliveries --tenant acme 3 --failed\n  \
        latchkey webhook redeliver --tenant acme 1042")]
    Deliveries {
        #[command(flatten)]
        tenant: TenantArg,
        /// Only this webhook's.
        id: Option<i64>,
        /// Only the failed ones.
        #[arg(long)]
        failed: bool,
        /// At most this many (1–10000; 100 by default).
        #[arg(long)]
        limit: Option<i64>,
    },
    /// Send a delivered or failed delivery again, with the same webhook-id (retried for 24
    /// hours, ahead of the webhook's later deliveries).
    Redeliver {
        #[command(flatten)]
        tenant: TenantArg,
        /// The delivery's id (see `webhook deliveries`).
        delivery: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum ScimCmd {
    /// Turn SCIM on for a tenant: prints its Tenant URL ({base_url}/scim/v2) and, once only, the
    /// bearer token to give the directory (stored hashed; lost, it is replaced with
    /// rotate-token). Users the directory creates are invited (e-mailed when [smtp] is set);
    /// deactivated ones are disabled (signed out everywhere); deleted ones are deleted. Groups
    /// are roles.
    #[command(after_help = "Examples:\n  latchkey scim enable --tenant acme\n  \
        latchkey scim enable --tenant acme -q > scim.token     # the token alone")]
    Enable {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Replace the tenant's SCIM token: the old one stops working at once. Prints the new one.
    RotateToken {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Turn SCIM off for a tenant: its token stops working; users and groups stay.
    Disable {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Show whether SCIM is on for a tenant, and its Tenant URL.
    Status {
        #[command(flatten)]
        tenant: TenantArg,
    },
}

#[derive(Debug, Subcommand)]
pub enum MdsCmd {
    /// Verify a FIDO Metadata Service BLOB (MDS3) and take it as the metadata every tenant's
    /// verified attestation policy checks against, replacing the one imported before. Its
    /// signature must chain to the FIDO Alliance's root (GlobalSign Root CA - R3, built in) or to
    /// the --root given; one that does not verify changes nothing. A BLOB no newer than the one
    /// in force (its serial number) needs --force: an older one may lack a revocation. Download
    /// it from https://mds3.fidoalliance.org/ (monthly; `nextUpdate` says when).
    #[command(after_help = "Examples:\n  \
        curl -fsSL -o blob.jwt https://mds3.fidoalliance.org/\n  \
        latchkey mds import blob.jwt\n  \
        latchkey mds import private-blob.jwt --root private-mds-root.pem")]
    Import {
        /// The BLOB as downloaded (a JWS, a few MiB).
        file: PathBuf,
        /// Trust this root (PEM) for the BLOB's signature instead of the FIDO Alliance's: for a
        /// private metadata service (repeatable).
        #[arg(long = "root", value_name = "FILE.pem")]
        roots: Vec<PathBuf>,
        /// Take a BLOB whose serial number is not above the imported one's.
        #[arg(long)]
        force: bool,
    },
    /// Show the metadata in force: serial number, next update, authenticators listed.
    Status,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AttestationArg {
    /// Every authenticator, attested or not (the default).
    Any,
    /// Only authenticators whose attestation chains to a root the imported FIDO metadata lists
    /// for their model (AAGUID), with no revoked or compromised status.
    Verified,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum RegistrationArg {
    /// Only invited users may register a passkey.
    Invite,
    /// Anyone may register a free username.
    Open,
}

#[derive(Debug, Subcommand)]
pub enum TenantCmd {
    /// Create a tenant with its first signing key.
    #[command(after_help = "Examples:\n  latchkey tenant create acme\n  \
        latchkey tenant create acme --name \"Acme Corp\" --base-url https://login.acme.com --rp-id acme.com")]
    Create {
        /// Short name in URLs: 1-63 of a-z, 0-9 and '-'.
        slug: String,
        /// Display name (default: the slug).
        #[arg(long)]
        name: Option<String>,
        /// Issuer URL (default: {public_url}/{slug}); https, or http on localhost.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// WebAuthn relying-party id (default: the base URL's host). A parent domain shares
        /// passkeys across its subdomains; it may not be a public suffix such as co.uk.
        #[arg(long, value_name = "ID")]
        rp_id: Option<String>,
        /// Who may register a passkey.
        #[arg(long, value_enum, default_value_t = RegistrationArg::Invite)]
        registration: RegistrationArg,
    },
    /// List tenants.
    List,
    /// Show one tenant.
    Show {
        /// The tenant's slug.
        slug: String,
    },
    /// Change a tenant's name, registration, attestation policy, URL or RP ID. A new base URL is
    /// a new issuer:
    /// tokens issued from then on name it, and client applications must be told (their issuer
    /// setting). The old URL keeps answering for --keep-old-url: its pages and discovery move
    /// with 308, and its JWKS serves the same keys, so tokens issued before still verify. The RP
    /// ID is kept while it is still valid for the new host, so passkeys keep working; a move
    /// that needs another RP ID is refused unless --rp-id and --yes are given.
    #[command(after_help = "Examples:\n  latchkey tenant update acme --name \"Acme Corp\"\n  \
        latchkey tenant update acme --base-url http://localhost:9090/acme     # after a move to another port\n  \
        latchkey tenant update acme --base-url https://login.acme.com --keep-old-url 90d\n  \
        latchkey tenant update acme --base-url https://id.acme.net --rp-id id.acme.net --yes\n  \
        latchkey tenant update acme --attestation-policy verified     # after latchkey mds import\n  \
        latchkey tenant update acme --attestation-policy verified --allowed-aaguid cb69481e-8ff7-4039-93ec-0a2729a154a8")]
    Update {
        /// The tenant's slug.
        slug: String,
        /// New display name.
        #[arg(long)]
        name: Option<String>,
        /// New issuer URL; https, or http on localhost.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// New WebAuthn relying-party id. Passkeys registered under the old one stop working:
        /// needs --yes.
        #[arg(long, value_name = "ID")]
        rp_id: Option<String>,
        /// Who may register a passkey.
        #[arg(long, value_enum)]
        registration: Option<RegistrationArg>,
        /// Which authenticators may register. verified needs FIDO metadata (`latchkey mds
        /// import`); passkeys registered before stay.
        #[arg(long, value_enum, value_name = "any|verified")]
        attestation_policy: Option<AttestationArg>,
        /// Under a verified policy, accept only these authenticator models (repeatable; the
        /// list replaces the one set before; `any`: every model the metadata lists).
        #[arg(long = "allowed-aaguid", value_name = "AAGUID|any")]
        allowed_aaguids: Vec<String>,
        /// How long the old URL keeps answering after a --base-url change (30d by default; 0:
        /// not at all).
        #[arg(long, value_name = "DURATION")]
        keep_old_url: Option<String>,
        /// Confirm an RP ID change.
        #[arg(long)]
        yes: bool,
    },
    /// Delete a tenant and everything it owns (users, apps, keys). Cannot be undone.
    Delete {
        /// The tenant's slug.
        slug: String,
        /// Confirm the deletion.
        #[arg(long)]
        yes: bool,
    },
    /// Brand a tenant's pages: the name people see and the logo beside it, the accent colour of
    /// buttons and links, the language of the pages when the browser asks for none Latchkey
    /// speaks. `none` clears one.
    #[command(after_help = "Examples:\n  \
        latchkey tenant brand acme --display-name \"Acme Login\" --color '#0b5fbf' --default-locale de\n  \
        latchkey tenant brand acme --logo acme.svg\n  \
        latchkey tenant brand acme --color none")]
    Brand {
        /// The tenant's slug.
        slug: String,
        /// The name the pages show instead of the tenant's name.
        #[arg(long, value_name = "NAME|none")]
        display_name: Option<String>,
        /// The accent colour, #rrggbb: at least 4.5:1 against white (WCAG AA), as the white labels
        /// of buttons and the links need.
        #[arg(long, value_name = "HEX|none")]
        color: Option<String>,
        /// en, de, fr, es, pt-BR, ja or zh-CN.
        #[arg(long, value_name = "LOCALE|none")]
        default_locale: Option<String>,
        /// The logo beside the name on every page: a PNG, or an SVG that is plain drawing (no
        /// script, no event handler, no reference outside itself); at most 256 KiB.
        #[arg(long, value_name = "FILE|none")]
        logo: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct TenantArg {
    /// The tenant to act on, by its slug (as `latchkey tenant list` shows it).
    #[arg(long, short = 't', value_name = "SLUG")]
    pub tenant: String,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AppTypeArg {
    /// Server-side web app (confidential: gets a client secret).
    Web,
    /// Single-page app (public: PKCE, no secret).
    Spa,
    /// Native or mobile app (public: PKCE, no secret).
    Native,
    /// Machine to machine (confidential: client credentials grant only).
    M2m,
}

#[derive(Debug, Subcommand)]
pub enum AppCmd {
    /// Register an application. Prints its Client ID and, once only, its Client Secret.
    #[command(after_help = "Examples:\n  \
        latchkey app create --tenant acme --name Portal --type web --redirect-uri https://portal.acme.com/oidc-callback\n  \
        latchkey app create --tenant acme --name Dashboard --type spa --redirect-uri http://localhost:5173/oidc-callback --cors-origin http://localhost:5173\n  \
        latchkey app create --tenant acme --name Importer --type m2m --scope users:invite\n  \
        latchkey app create --tenant acme --name Api --type m2m --scope introspect\n  \
        latchkey app create --tenant acme --name acmectl --type native --device-flow")]
    Create {
        #[command(flatten)]
        tenant: TenantArg,
        /// Application name.
        #[arg(long)]
        name: String,
        /// Kind of application.
        #[arg(long = "type", value_enum)]
        app_type: AppTypeArg,
        /// Login Redirect URL, matched character for character (repeatable).
        #[arg(long = "redirect-uri", value_name = "URL")]
        redirect_uris: Vec<String>,
        /// Where /logout may send the browser afterwards (repeatable).
        #[arg(long = "post-logout-redirect-uri", value_name = "URL")]
        post_logout_redirect_uris: Vec<String>,
        /// Browser origin allowed to call the token and userinfo endpoints (repeatable).
        #[arg(long = "cors-origin", value_name = "ORIGIN")]
        cors_origins: Vec<String>,
        /// Scope granted to the app (repeatable): users:invite (bulk invitations, m2m),
        /// credentials (users' tokens may manage their passkeys through /api/credentials),
        /// introspect (a resource server that may introspect every token of the tenant),
        /// offline_access (refresh tokens that outlive the user's browser session), scim (the SCIM
        /// endpoint, with an m2m app's client-credentials token).
        #[arg(long = "scope", value_name = "SCOPE")]
        scopes: Vec<String>,
        /// Allow the device authorization grant (RFC 8628): a CLI or a device without a browser
        /// shows a code the user enters at {base_url}/device. Native apps only; such an app needs
        /// no redirect URI.
        #[arg(long = "device-flow")]
        device_flow: bool,
        /// Require every sign-in to reach this acr (OpenID EAP ACR Values): phr (a passkey, not a
        /// social sign-in) or phrh (a passkey bound to its device, or a security key; not a synced
        /// passkey). A user who has none is sent back to the app with access_denied.
        #[arg(long = "require-acr", value_name = "phr|phrh")]
        require_acr: Option<String>,
        /// explicit: a consent page asks the user to allow the app what it asks for (its name
        /// and each scope in plain words), remembered per user until revoked on /account; for
        /// third-party apps. implicit (the default): first-party, no page.
        #[arg(long = "consent", value_name = "implicit|explicit")]
        consent: Option<String>,
        /// Post a signed logout token to this URL whenever a session in which the app received
        /// an ID token ends (OpenID Back-Channel Logout 1.0): https, or http on loopback.
        #[arg(long = "backchannel-logout-uri", value_name = "URL")]
        backchannel_logout_uri: Option<String>,
        /// The app needs the sid claim in its logout tokens (Latchkey always sends it).
        #[arg(long = "backchannel-logout-session-required", requires = "backchannel_logout_uri")]
        backchannel_logout_session_required: bool,
        /// A PNG shown on the app's consent page (at most 256 KiB and 1024×1024 pixels).
        #[arg(long = "logo", value_name = "FILE.png")]
        logo: Option<std::path::PathBuf>,
        /// The algorithm of the app's ID, access and logout tokens: RS256 (the default), ES256
        /// or EdDSA, for which the tenant needs a key (`latchkey key rotate --alg ES256`).
        #[arg(long = "signing-alg", value_name = "RS256|ES256|EdDSA", value_parser = ["RS256", "ES256", "EdDSA"])]
        signing_alg: Option<String>,
        /// Accept only pushed authorization requests (PAR, RFC 9126): the app POSTs its request
        /// to {base_url}/par and sends the browser to /authorize with the request_uri it gets.
        #[arg(long = "require-par")]
        require_par: bool,
        /// Its token requests must carry a DPoP proof (RFC 9449): every access token it gets
        /// is bound to the client's key (cnf.jkt), and the proofs must carry a server nonce.
        #[arg(long = "require-dpop")]
        require_dpop: bool,
        /// How a web or m2m app authenticates: secret (the default; a client secret is shown
        /// once) or private_key_jwt (no secret: it signs a client_assertion JWT, RFC 7523, with
        /// a key of --jwks or --jwks-uri).
        #[arg(long = "token-auth", value_name = "secret|private_key_jwt", value_parser = ["secret", "private_key_jwt"])]
        token_auth: Option<String>,
        /// The app's public keys, a JWK Set (JSON) file, for private_key_jwt.
        #[arg(long = "jwks", value_name = "FILE", conflicts_with = "jwks_uri")]
        jwks: Option<std::path::PathBuf>,
        /// Where the app publishes its JWK Set (https, or http on loopback), for private_key_jwt.
        #[arg(long = "jwks-uri", value_name = "URL")]
        jwks_uri: Option<String>,
    },
    /// List a tenant's applications.
    List {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Show one application.
    Show {
        #[command(flatten)]
        tenant: TenantArg,
        /// The application's Client ID (as `app list` shows it).
        #[arg(allow_hyphen_values = true)]
        client_id: String,
    },
    /// Change an application's name or lists, validated as `app create` is. Adding a value it has
    /// already changes nothing; removing one it does not have is an error. Prints the app.
    #[command(after_help = "Examples:\n  \
        latchkey app update --tenant acme CLIENT_ID --add-redirect-uri https://portal.acme.com/cb2\n  \
        latchkey app update --tenant acme CLIENT_ID --name \"Customer Portal\" --remove-cors-origin http://localhost:5173")]
    Update {
        #[command(flatten)]
        tenant: TenantArg,
        /// The application's Client ID (as `app list` shows it).
        #[arg(allow_hyphen_values = true)]
        client_id: String,
        /// New name (unique in the tenant).
        #[arg(long)]
        name: Option<String>,
        /// Add a Login Redirect URL (repeatable).
        #[arg(long = "add-redirect-uri", value_name = "URL")]
        add_redirect_uris: Vec<String>,
        /// Remove a Login Redirect URL (repeatable).
        #[arg(long = "remove-redirect-uri", value_name = "URL")]
        remove_redirect_uris: Vec<String>,
        /// Add a post-logout redirect URL (repeatable).
        #[arg(long = "add-post-logout-redirect-uri", value_name = "URL")]
        add_post_logout_redirect_uris: Vec<String>,
        /// Remove a post-logout redirect URL (repeatable).
        #[arg(long = "remove-post-logout-redirect-uri", value_name = "URL")]
        remove_post_logout_redirect_uris: Vec<String>,
        /// Add a CORS origin (repeatable).
        #[arg(long = "add-cors-origin", value_name = "ORIGIN")]
        add_cors_origins: Vec<String>,
        /// Remove a CORS origin (repeatable).
        #[arg(long = "remove-cors-origin", value_name = "ORIGIN")]
        remove_cors_origins: Vec<String>,
        /// Grant an API scope (repeatable).
        #[arg(long = "add-scope", value_name = "SCOPE")]
        add_scopes: Vec<String>,
        /// Take an API scope away (repeatable).
        #[arg(long = "remove-scope", value_name = "SCOPE")]
        remove_scopes: Vec<String>,
        /// Switch the device authorization grant on or off (native apps only).
        #[arg(long = "device-flow", value_name = "true|false")]
        device_flow: Option<bool>,
        /// Require every sign-in to reach this acr: phr, phrh, or none to require nothing more
        /// than the application's request.
        #[arg(long = "require-acr", value_name = "phr|phrh|none")]
        require_acr: Option<String>,
        /// explicit (a consent page) or implicit (none).
        #[arg(long = "consent", value_name = "implicit|explicit")]
        consent: Option<String>,
        /// Set the back-channel logout URL, or none to stop sending logout tokens.
        #[arg(long = "backchannel-logout-uri", value_name = "URL|none")]
        backchannel_logout_uri: Option<String>,
        /// Whether the app needs sid in its logout tokens.
        #[arg(long = "backchannel-logout-session-required", value_name = "true|false")]
        backchannel_logout_session_required: Option<bool>,
        /// A new logo (a PNG), or none to show none.
        #[arg(long = "logo", value_name = "FILE.png|none")]
        logo: Option<std::path::PathBuf>,
        /// The algorithm of the app's tokens from now on (tokens already issued still verify).
        #[arg(long = "signing-alg", value_name = "RS256|ES256|EdDSA", value_parser = ["RS256", "ES256", "EdDSA"])]
        signing_alg: Option<String>,
        /// Whether the app's authorization requests must be pushed first (PAR).
        #[arg(long = "require-par", value_name = "true|false")]
        require_par: Option<bool>,
        /// Whether the app's token requests must carry DPoP proofs.
        #[arg(long = "require-dpop", value_name = "true|false")]
        require_dpop: Option<bool>,
        /// Replace a private_key_jwt app's keys with this JWK Set (JSON) file.
        #[arg(long = "jwks", value_name = "FILE", conflicts_with = "jwks_uri")]
        jwks: Option<std::path::PathBuf>,
        /// Replace a private_key_jwt app's keys with the JWK Set at this URL.
        #[arg(long = "jwks-uri", value_name = "URL")]
        jwks_uri: Option<String>,
    },
    /// Delete an application; its tokens stop being accepted.
    Delete {
        #[command(flatten)]
        tenant: TenantArg,
        /// The application's Client ID (as `app list` shows it).
        #[arg(allow_hyphen_values = true)]
        client_id: String,
        /// Confirm the deletion.
        #[arg(long)]
        yes: bool,
    },
    /// Issue a new Client Secret (shown once); the old one stops working at once.
    RotateSecret {
        #[command(flatten)]
        tenant: TenantArg,
        /// The application's Client ID (as `app list` shows it).
        #[arg(allow_hyphen_values = true)]
        client_id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeyCmd {
    /// List signing keys: `current` (signs new tokens) and `previous` (no longer signs, still
    /// published in the JWKS until retired).
    List {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Make a new key current now; the old one of its algorithm becomes `previous` and stays in
    /// the JWKS so issued tokens still verify.
    #[command(after_help = "Examples:\n  latchkey key rotate --tenant acme              # a new RS256 key\n  \
        latchkey key rotate --tenant acme --alg ES256  # add (or rotate) an ES256 key, then:\n  \
        latchkey app update --tenant acme CLIENT_ID --signing-alg ES256")]
    Rotate {
        #[command(flatten)]
        tenant: TenantArg,
        /// The algorithm of the new key: RS256 (the default; every tenant has one, as OpenID
        /// Connect requires), ES256 (ECDSA P-256) or EdDSA (Ed25519). The first ES256 or EdDSA
        /// key adds that algorithm; only the current key of the same algorithm steps down.
        #[arg(long = "alg", value_name = "RS256|ES256|EdDSA", value_parser = ["RS256", "ES256", "EdDSA"])]
        alg: Option<String>,
    },
    /// Remove a previous key from the JWKS and destroy it. Tokens it signed stop verifying.
    /// The current key cannot be retired (rotate first). Cannot be undone.
    Retire {
        #[command(flatten)]
        tenant: TenantArg,
        /// The key id (kid) of a previous key, as `key list` shows it.
        #[arg(allow_hyphen_values = true)]
        kid: String,
        /// Confirm the retirement.
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserCmd {
    /// Invite a user: prints a one-time link with which they register a passkey.
    #[command(
        after_help = "Examples:\n  latchkey user invite --tenant acme --email ada@acme.com --name \"Ada Lovelace\"\n  \
        latchkey user invite --tenant acme --email ada@acme.com --name Ada -o json | jq -r .invite_url"
    )]
    Invite {
        #[command(flatten)]
        tenant: TenantArg,
        /// The user's e-mail address (their username).
        #[arg(long)]
        email: String,
        /// The user's display name.
        #[arg(long)]
        name: String,
        /// Role to assign (repeatable).
        #[arg(long = "role", value_name = "ROLE")]
        roles: Vec<String>,
        /// The language of the invitation e-mail and the user's later ones: en, de, fr, es,
        /// pt-BR, ja or zh-CN (kept with the user; English when never given).
        #[arg(long, value_name = "LOCALE")]
        locale: Option<String>,
    },
    /// Invite everyone in a CSV file (header email,name[,roles][,locale]; roles separated by ';';
    /// locale: the language of the e-mails, en, de, fr, es, pt-BR, ja or zh-CN).
    /// Bad rows are rejected one by one and reported; the others are invited. Any number of rows
    /// (a file of up to 4 GiB; a million rows take about a quarter of a minute); the API's
    /// limits.invite_* do not apply. Re-running skips users who are already present. Exit code 1 when any row was rejected; 2 when the file
    /// cannot be read or the --links-out file exists (without --force): then nothing is sent.
    #[command(after_help = "Examples:\n  latchkey user import --tenant acme staff.csv --dry-run\n  \
        latchkey user import --tenant acme staff.csv --links-out links.csv")]
    Import {
        #[command(flatten)]
        tenant: TenantArg,
        /// The CSV file.
        file: std::path::PathBuf,
        /// Check the file and report what would happen; store nothing.
        #[arg(long)]
        dry_run: bool,
        /// Write email,name,invite_url of the invited users to this new CSV file (mode 0600), in
        /// address order (the daemon stores the rows sorted by e-mail). Without it (and without
        /// [smtp] in the daemon) the links are not saved anywhere.
        #[arg(long, value_name = "FILE.csv")]
        links_out: Option<std::path::PathBuf>,
        /// Overwrite the --links-out file if it exists.
        #[arg(long, requires = "links_out")]
        force: bool,
    },
    /// Issue fresh invite links to users who have not registered yet (status invited): for a
    /// lost or expired link. Each user's older links stop working. The links are e-mailed when
    /// the daemon has [smtp]; named users' links are printed, --all-pending's only counted (use
    /// --links-out). Users who are active, disabled or unknown are skipped with the reason; exit
    /// code 1 when any was.
    #[command(after_help = "Examples:\n  latchkey user reinvite --tenant acme ada@acme.com bob@acme.com\n  \
        latchkey user reinvite --tenant acme --all-pending --links-out links.csv")]
    Reinvite {
        #[command(flatten)]
        tenant: TenantArg,
        /// E-mail addresses of invited users.
        #[arg(value_name = "EMAIL", required_unless_present = "all_pending", conflicts_with = "all_pending")]
        emails: Vec<String>,
        /// Every user of the tenant who is still invited.
        #[arg(long)]
        all_pending: bool,
        /// Report who would get a new link; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Write email,name,invite_url of the new links to this new CSV file (mode 0600).
        #[arg(long, value_name = "FILE.csv")]
        links_out: Option<std::path::PathBuf>,
        /// Overwrite the --links-out file if it exists.
        #[arg(long, requires = "links_out")]
        force: bool,
    },
    /// List users (filter by role or status).
    List {
        #[command(flatten)]
        tenant: TenantArg,
        /// Only users with this role.
        #[arg(long)]
        role: Option<String>,
        /// Only users in this state.
        #[arg(long, value_parser = ["invited", "active", "disabled"])]
        status: Option<String>,
    },
    /// Show one user.
    Show {
        #[command(flatten)]
        tenant: TenantArg,
        /// The user's e-mail address.
        email: String,
    },
    /// Disable a user: they cannot sign in, and their sessions and refresh tokens end at once.
    Disable {
        #[command(flatten)]
        tenant: TenantArg,
        /// The user's e-mail address.
        email: String,
    },
    /// Enable a disabled user again.
    Enable {
        #[command(flatten)]
        tenant: TenantArg,
        /// The user's e-mail address.
        email: String,
    },
    /// Delete a user with their credentials, sessions and tokens. Cannot be undone.
    Delete {
        #[command(flatten)]
        tenant: TenantArg,
        /// The user's e-mail address.
        email: String,
        /// Confirm the deletion.
        #[arg(long)]
        yes: bool,
    },
    /// Issue a one-time recovery link: the user registers a new passkey (lost device) and their
    /// other sessions end.
    Recover {
        #[command(flatten)]
        tenant: TenantArg,
        /// The user's e-mail address.
        email: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum SocialCmd {
    /// Enable a provider (or change its settings). The client secret is read from a file or from
    /// standard input (`-`), never from the command line, and is stored sealed.
    #[command(after_help = "Register this redirect URI at the provider (printed by `social list`):\n  \
        {base_url}/login/{provider}/callback\n\nExamples:\n  \
        latchkey social enable --tenant acme google --client-id ID.apps.googleusercontent.com --client-secret-file google.secret --allowed-domain acme.com\n  \
        latchkey social enable --tenant acme github --client-id Iv1.abc --client-secret-file - --allowed-org acme < github.secret\n  \
        latchkey social enable --tenant acme oidc --name Entra --issuer https://login.microsoftonline.com/TENANT/v2.0 --client-id ID --client-secret-file entra.secret")]
    Enable {
        #[command(flatten)]
        tenant: TenantArg,
        /// google, github or oidc (facebook and twitter are not available yet).
        #[arg(value_parser = ["google", "github", "oidc", "facebook", "twitter"])]
        kind: String,
        /// The OAuth client id the provider gave you.
        #[arg(long)]
        client_id: Option<String>,
        /// File holding the client secret, or - for standard input.
        #[arg(long, value_name = "FILE|-")]
        client_secret_file: Option<std::path::PathBuf>,
        /// The button's label; required for oidc, where it also names the provider in URLs.
        #[arg(long)]
        name: Option<String>,
        /// oidc: the issuer URL to discover. google: overrides https://accounts.google.com.
        #[arg(long, value_name = "URL")]
        issuer: Option<String>,
        /// github: overrides https://github.com (GitHub Enterprise Server).
        #[arg(long, value_name = "URL")]
        github_url: Option<String>,
        /// github: overrides https://api.github.com.
        #[arg(long, value_name = "URL")]
        github_api_url: Option<String>,
        /// Only e-mails of this domain (repeatable); Google checks its `hd` claim.
        #[arg(long = "allowed-domain", value_name = "DOMAIN")]
        allowed_domains: Vec<String>,
        /// github: only active members of this organisation (repeatable).
        #[arg(long = "allowed-org", value_name = "ORG")]
        allowed_orgs: Vec<String>,
        /// Create a user for an unknown verified e-mail (tenants with open registration only).
        #[arg(long)]
        create_users: bool,
        /// Save without first reading the provider's discovery document (or GitHub's API root),
        /// for a provider this server cannot reach yet.
        #[arg(long)]
        no_verify: bool,
    },
    /// List the tenant's providers with the redirect URI to register (never their secrets).
    List {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Disable a provider: its button disappears at once; users' links are kept, the stored
    /// client secret is deleted (`social enable` again with the secret file brings it back).
    Disable {
        #[command(flatten)]
        tenant: TenantArg,
        /// google, github, or the key of an oidc provider (see `social list`).
        provider: String,
        /// Accepted and not needed: disabling asks no confirmation (nothing is lost that
        /// `social enable` cannot restore).
        #[arg(long, hide = true)]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum RoleCmd {
    /// Create a role: lowercase a-z, 0-9 and _ . : - (e.g. admin, team:billing).
    Create {
        #[command(flatten)]
        tenant: TenantArg,
        /// The role's name.
        name: String,
        /// What the role is for, shown by `role list`.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// List roles with their number of users.
    List {
        #[command(flatten)]
        tenant: TenantArg,
    },
    /// Delete a role; users lose it.
    Delete {
        #[command(flatten)]
        tenant: TenantArg,
        /// The role's name.
        name: String,
        /// Confirm the deletion.
        #[arg(long)]
        yes: bool,
    },
    /// Give a role to users (all or nothing: an unknown e-mail changes nobody).
    Assign {
        #[command(flatten)]
        tenant: TenantArg,
        /// The role's name.
        name: String,
        /// E-mail addresses of the users (one or more).
        #[arg(required = true)]
        emails: Vec<String>,
    },
    /// Take a role from users.
    Unassign {
        #[command(flatten)]
        tenant: TenantArg,
        /// The role's name.
        name: String,
        /// E-mail addresses of the users (one or more).
        #[arg(required = true)]
        emails: Vec<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum CredentialCmd {
    /// List a user's credentials.
    List {
        #[command(flatten)]
        tenant: TenantArg,
        /// The user's e-mail address.
        email: String,
    },
    /// Revoke one credential (e.g. a lost device). Revoking the last one leaves the user needing
    /// a recovery link.
    Revoke {
        #[command(flatten)]
        tenant: TenantArg,
        /// The user's e-mail address.
        email: String,
        /// Credential id, as `credential list` shows it.
        #[arg(allow_hyphen_values = true)]
        credential_id: String,
    },
}

pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Only this tenant's events (default: all, with a TENANT column).
    #[arg(long, short = 't', value_name = "SLUG")]
    pub tenant: Option<String>,
    /// Only events since WHEN: a duration back from now (15m, 1h, 7d) or an RFC 3339 time
    /// (2026-11-01T00:00:00Z).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only events up to WHEN (a duration back from now, or an RFC 3339 time).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only events about this user (their e-mail is the subject), or this Client ID, key id,
    /// role, provider or tenant.
    #[arg(long, value_name = "EMAIL")]
    pub user: Option<String>,
    /// Only these actions: a name or a glob (`user.*`, `token.*`).
    #[arg(long, value_name = "GLOB")]
    pub action: Option<String>,
    /// Only events by this actor (`uid:0` for the admin socket, a user's e-mail, a Client ID).
    #[arg(long, value_name = "ACTOR")]
    pub actor: Option<String>,
    /// Only events by or about this application (its Client ID as actor or subject).
    #[arg(long, value_name = "CLIENT_ID")]
    pub app: Option<String>,
    /// Only `success`, `failure` (any), or `failure: CODE`.
    #[arg(long, value_name = "OUTCOME")]
    pub outcome: Option<String>,
    /// At most N events (1-10000; default 1000), the oldest first.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub limit: Option<u32>,
    /// Keep printing new events as they happen (Ctrl-C to stop).
    #[arg(long)]
    pub follow: bool,
}
