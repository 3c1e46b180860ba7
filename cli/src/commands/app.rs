use latchkey::admin::{App, AppCreated, AppType, Confirm, CreateApp, SecretRotated, UpdateApp};

use super::{require_yes, seg};
use crate::args::{AppCmd, AppTypeArg};
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields, lines, table};

fn rows(a: &App) -> Vec<(&'static str, String)> {
    vec![
        ("client id", a.client_id.clone()),
        ("name", a.name.clone()),
        ("type", a.app_type.as_str().to_owned()),
        ("confidential", if a.confidential { "yes".into() } else { "no (public client, PKCE)".into() }),
        ("redirect uris", lines(&a.redirect_uris)),
        ("post-logout redirect uris", lines(&a.post_logout_redirect_uris)),
        ("cors origins", lines(&a.cors_origins)),
        ("scopes", lines(&a.scopes)),
        ("device flow", if a.device_flow { "yes".into() } else { "no".into() }),
        ("require acr", a.require_acr.clone().unwrap_or_else(|| "none".into())),
        ("consent", a.consent.clone()),
        ("signing alg", a.signing_alg.as_str().to_owned()),
        ("require par", if a.require_par { "yes".into() } else { "no".into() }),
        ("require dpop", if a.require_dpop { "yes".into() } else { "no".into() }),
        (
            "token auth",
            match (&a.jwks_uri, a.jwks_kids.is_empty()) {
                (Some(uri), _) => format!("{} ({uri})", a.token_auth.as_str()),
                (None, false) => format!("{} (keys {})", a.token_auth.as_str(), a.jwks_kids.join(", ")),
                (None, true) => a.token_auth.as_str().to_owned(),
            },
        ),
        ("logo sha256", a.logo_sha256.clone().unwrap_or_else(|| "none".into())),
        (
            "backchannel logout uri",
            match &a.backchannel_logout_uri {
                Some(uri) if a.backchannel_logout_session_required => format!("{uri} (sid required)"),
                Some(uri) => uri.clone(),
                None => "none".into(),
            },
        ),
        ("created", a.created.clone()),
    ]
}

/// A JWK Set file, as text (the daemon checks it).
fn read_jwks(path: &std::path::Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::File(format!("cannot read {}: {e}", path.display())))
}

/// A logo file, base64 for the JSON of the admin call (the daemon checks it).
pub(super) fn read_logo(path: &std::path::Path) -> Result<String, CliError> {
    use base64::Engine as _;
    let bytes = std::fs::read(path).map_err(|e| CliError::File(format!("cannot read {}: {e}", path.display())))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

pub fn run(client: &Client, cmd: AppCmd) -> Result<Output, CliError> {
    match cmd {
        AppCmd::Create {
            tenant,
            name,
            app_type,
            redirect_uris,
            post_logout_redirect_uris,
            cors_origins,
            scopes,
            device_flow,
            require_acr,
            consent,
            backchannel_logout_uri,
            backchannel_logout_session_required,
            logo,
            signing_alg,
            require_par,
            require_dpop,
            token_auth,
            jwks,
            jwks_uri,
        } => {
            let req = CreateApp {
                name,
                app_type: match app_type {
                    AppTypeArg::Web => AppType::Web,
                    AppTypeArg::Spa => AppType::Spa,
                    AppTypeArg::Native => AppType::Native,
                    AppTypeArg::M2m => AppType::M2m,
                },
                redirect_uris,
                post_logout_redirect_uris,
                cors_origins,
                scopes,
                device_flow,
                require_acr,
                consent,
                backchannel_logout_uri,
                backchannel_logout_session_required,
                logo_png: logo.as_deref().map(read_logo).transpose()?,
                signing_alg,
                require_par,
                require_dpop,
                token_auth,
                jwks: jwks.as_deref().map(read_jwks).transpose()?,
                jwks_uri,
            };
            let slug = seg(&tenant.tenant)?;
            let created: AppCreated = client.post(&format!("/tenants/{slug}/apps"), &req)?;
            let mut r = rows(&created.app);
            let mut out_note = None;
            if let Some(secret) = &created.client_secret {
                r.insert(1, ("client secret", secret.clone()));
                out_note = Some("The client secret is shown this once and stored only as a hash: keep it now.");
            }
            let mut out = Output::new(&created)?
                .text(format!("Created application {:?} in tenant {slug}.", created.app.name))
                .table(fields(&r))
                .secret(created.app.client_id.clone());
            if let Some(secret) = &created.client_secret {
                out = out.secret(secret.clone());
            }
            Ok(match out_note {
                Some(n) => out.note(n),
                None => out,
            })
        }
        AppCmd::List { tenant } => {
            let list: Vec<App> = client.get(&format!("/tenants/{}/apps", seg(&tenant.tenant)?))?;
            let mut t = table(&["CLIENT ID", "NAME", "TYPE", "REDIRECT URIS", "CREATED"]);
            for a in &list {
                t.add_row(vec![
                    a.client_id.clone(),
                    a.name.clone(),
                    a.app_type.as_str().into(),
                    lines(&a.redirect_uris),
                    a.created.clone(),
                ]);
            }
            Ok(Output::new(&list)?.table(t))
        }
        AppCmd::Show { tenant, client_id } => {
            let a: App = client.get(&format!("/tenants/{}/apps/{}", seg(&tenant.tenant)?, seg(&client_id)?))?;
            Ok(Output::new(&a)?.table(fields(&rows(&a))))
        }
        AppCmd::Update {
            tenant,
            client_id,
            name,
            add_redirect_uris,
            remove_redirect_uris,
            add_post_logout_redirect_uris,
            remove_post_logout_redirect_uris,
            add_cors_origins,
            remove_cors_origins,
            add_scopes,
            remove_scopes,
            device_flow,
            require_acr,
            consent,
            backchannel_logout_uri,
            backchannel_logout_session_required,
            logo,
            signing_alg,
            require_par,
            require_dpop,
            jwks,
            jwks_uri,
        } => {
            let req = UpdateApp {
                name,
                add_redirect_uris,
                remove_redirect_uris,
                add_post_logout_redirect_uris,
                remove_post_logout_redirect_uris,
                add_cors_origins,
                remove_cors_origins,
                add_scopes,
                remove_scopes,
                device_flow,
                require_acr,
                consent,
                backchannel_logout_uri,
                backchannel_logout_session_required,
                remove_logo: logo.as_deref().is_some_and(|p| p.as_os_str() == "none"),
                logo_png: logo.as_deref().filter(|p| p.as_os_str() != "none").map(read_logo).transpose()?,
                signing_alg,
                require_par,
                require_dpop,
                jwks: jwks.as_deref().map(read_jwks).transpose()?,
                jwks_uri,
            };
            if req.is_empty() {
                return Err(CliError::Usage(
                    "nothing to change: give --name, --device-flow, --require-acr, --consent, --backchannel-logout-uri, \
                     --signing-alg, --require-par or \
                     an --add-…/--remove-… option \
                     (see --help)"
                        .into(),
                ));
            }
            let path = format!("/tenants/{}/apps/{}", seg(&tenant.tenant)?, seg(&client_id)?);
            let a: App = client.call(hyper::Method::PATCH, &path, Some(&req))?;
            let out = Output::new(&a)?.table(fields(&rows(&a)));
            if a.app_type == AppType::Native && a.redirect_uris.is_empty() && !a.device_flow {
                return Ok(out.note(
                    "This app can sign no one in now: add a redirect URI (--add-redirect-uri) or turn the device \
                     flow back on (--device-flow true).",
                ));
            }
            Ok(out)
        }
        AppCmd::Delete { tenant, client_id, yes } => {
            require_yes(yes, &format!("application {client_id:?}"))?;
            client.delete(
                &format!("/tenants/{}/apps/{}", seg(&tenant.tenant)?, seg(&client_id)?),
                &Confirm { confirm: true },
            )?;
            Ok(Output::new(&serde_json::json!({"deleted": client_id}))?
                .text(format!("Deleted application {client_id}.")))
        }
        AppCmd::RotateSecret { tenant, client_id } => {
            let r: SecretRotated = client.post(
                &format!("/tenants/{}/apps/{}/rotate-secret", seg(&tenant.tenant)?, seg(&client_id)?),
                &serde_json::json!({}),
            )?;
            Ok(Output::new(&r)?
                .secret(r.client_secret.clone())
                .table(fields(&[("client id", r.client_id.clone()), ("client secret", r.client_secret.clone())]))
                .note("The old secret no longer works. The new one is shown this once: keep it now."))
        }
    }
}
