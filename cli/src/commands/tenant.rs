use latchkey::admin::{AttestationPolicy, BrandTenant, Confirm, CreateTenant, Registration, Tenant, UpdateTenant};

use super::{require_yes, seg};
use crate::args::{AttestationArg, RegistrationArg, TenantCmd};
use crate::client::Client;
use crate::error::CliError;
use crate::output::{Output, fields, table};

fn discovery(t: &Tenant) -> String {
    format!("{}/.well-known/openid-configuration", t.issuer)
}

/// One tenant, as a table and as JSON with the table's `discovery` too.
fn shown(t: &Tenant) -> Result<Output, CliError> {
    let url = discovery(t);
    Ok(Output::new(t)?.with_field("discovery", |_| url.clone().into()).table(show(t)))
}

fn show(t: &Tenant) -> comfy_table::Table {
    let mut rows = vec![
        ("slug", t.slug.clone()),
        ("name", t.name.clone()),
        ("issuer", t.issuer.clone()),
        ("discovery", discovery(t)),
        ("rp id", t.rp_id.clone()),
        ("registration", t.registration.as_str().to_owned()),
        ("created", t.created.clone()),
    ];
    let or_default = |v: &Option<String>, d: &str| v.clone().unwrap_or_else(|| d.to_owned());
    rows.push(("display name", or_default(&t.display_name, "none (the name)")));
    rows.push(("accent color", or_default(&t.accent_color, "none (the default)")));
    rows.push(("default locale", or_default(&t.default_locale, "none (en)")));
    rows.push(("logo sha256", or_default(&t.logo_sha256, "none")));
    rows.push(("attestation policy", t.attestation_policy.as_str().to_owned()));
    if !t.allowed_aaguids.is_empty() {
        rows.push(("allowed aaguids", t.allowed_aaguids.join(", ")));
    }
    // Only while a moved tenant's old URL answers (as `old_urls` is only in the JSON then).
    if !t.old_urls.is_empty() {
        let old = t.old_urls.iter().map(|o| format!("{} (until {})", o.base_url, o.until)).collect::<Vec<_>>();
        rows.push(("old urls", old.join(", ")));
    }
    fields(&rows)
}

fn registration(r: RegistrationArg) -> Registration {
    match r {
        RegistrationArg::Invite => Registration::Invite,
        RegistrationArg::Open => Registration::Open,
    }
}

pub fn run(client: &Client, cmd: TenantCmd) -> Result<Output, CliError> {
    match cmd {
        TenantCmd::Create { slug, name, base_url, rp_id, registration } => {
            let req =
                CreateTenant { slug, name, base_url, rp_id, registration: Some(self::registration(registration)) };
            let t: Tenant = client.post("/tenants", &req)?;
            let slug = t.slug.clone();
            Ok(shown(&t)?.text(format!("Created tenant {slug}.")).note(format!(
                "next: latchkey app create --tenant {slug} --name \"My App\" --type web --redirect-uri https://app.example.com/oidc-callback"
            )))
        }
        TenantCmd::Brand { slug, display_name, color, default_locale, logo } => {
            let logo = match logo {
                Some(path) if path.as_os_str() == "none" => Some("none".to_owned()),
                Some(path) => Some(super::app::read_logo(&path)?),
                None => None,
            };
            let req = BrandTenant { display_name, color, default_locale, logo };
            let t: Tenant = client.call(hyper::Method::PUT, &format!("/tenants/{}/brand", seg(&slug)?), Some(&req))?;
            shown(&t)
        }
        TenantCmd::List => {
            let list: Vec<Tenant> = client.get("/tenants")?;
            let mut t = table(&["SLUG", "NAME", "ISSUER", "RP ID", "REGISTRATION", "CREATED"]);
            for x in &list {
                t.add_row(vec![&x.slug, &x.name, &x.issuer, &x.rp_id, x.registration.as_str(), &x.created]);
            }
            let out = Output::new(&list)?.table(t);
            Ok(if list.is_empty() { out.note("no tenants yet: latchkey tenant create SLUG") } else { out })
        }
        TenantCmd::Show { slug } => {
            let t: Tenant = client.get(&format!("/tenants/{}", seg(&slug)?))?;
            shown(&t)
        }
        TenantCmd::Update {
            slug,
            name,
            base_url,
            rp_id,
            registration,
            attestation_policy,
            allowed_aaguids,
            keep_old_url,
            yes,
        } => {
            let keep_old_url_seconds = match keep_old_url {
                None => None,
                Some(text) if text == "0" => Some(0),
                Some(text) => Some(
                    humantime::parse_duration(&text)
                        .map_err(|e| {
                            CliError::Usage(format!("--keep-old-url {text:?} is not a duration like 30d or 12h: {e}"))
                        })?
                        .as_secs(),
                ),
            };
            let req = UpdateTenant {
                name,
                base_url,
                rp_id,
                registration: registration.map(self::registration),
                attestation_policy: attestation_policy.map(|a| match a {
                    AttestationArg::Any => AttestationPolicy::Any,
                    AttestationArg::Verified => AttestationPolicy::Verified,
                }),
                allowed_aaguids: match allowed_aaguids.as_slice() {
                    [] => None,
                    [any] if any == "any" => Some(vec![]),
                    list => Some(list.to_vec()),
                },
                keep_old_url_seconds,
                confirm: yes,
            };
            if req.is_empty() {
                return Err(CliError::Usage(
                    "nothing to change: give --name, --base-url, --rp-id, --registration, --attestation-policy or \
                     --allowed-aaguid (see --help)"
                        .into(),
                ));
            }
            let moved = req.base_url.is_some();
            let t: Tenant = client.call(hyper::Method::PATCH, &format!("/tenants/{}", seg(&slug)?), Some(&req))?;
            let out = shown(&t)?.text(format!("Updated tenant {}.", t.slug));
            Ok(if moved {
                out.note(format!(
                    "The issuer is now {}: tell the client applications (their issuer setting). Tokens issued \
                     before still verify with the old URL's JWKS while it answers.",
                    t.issuer
                ))
            } else {
                out
            })
        }
        TenantCmd::Delete { slug, yes } => {
            require_yes(yes, &format!("tenant {slug:?} and everything it owns"))?;
            client.delete(&format!("/tenants/{}", seg(&slug)?), &Confirm { confirm: true })?;
            Ok(Output::new(&serde_json::json!({"deleted": slug}))?.text(format!("Deleted tenant {slug}.")))
        }
    }
}
