//! E-mails over SMTP (`[smtp]`): invitations and recovery links, and the notice that a social
//! account was linked to a user's. Sending happens after the change is stored, so a failed
//! delivery never loses an invitation: the failure is reported for that address and the link
//! still works (and is still shown to the operator).

use lettre::message::{Mailbox, header::ContentType};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, CertificateStore, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use std::sync::Arc;

use futures_util::StreamExt;
use latchkey::admin::InvitedRow;

use crate::config::Smtp;
use crate::i18n::{Locale, Tr};

pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer").field("from", &self.from.to_string()).finish_non_exhaustive()
    }
}

/// One invitation to deliver.
pub struct Invite<'a> {
    pub tenant: &'a str,
    pub email: &'a str,
    pub name: &'a str,
    pub url: &'a str,
    pub recovery: bool,
    /// The invitee's language.
    pub locale: Locale,
}

/// A social account just linked to a user's (SPEC §6): the user hears of every new way in.
pub struct LinkNotice<'a> {
    pub tenant: &'a str,
    pub email: &'a str,
    pub name: &'a str,
    /// The provider's label (`GitHub`, `Work SSO`).
    pub provider: &'a str,
    /// The upstream account as the confirmation page named it.
    pub account: &'a str,
    pub account_url: &'a str,
    /// The user's language.
    pub locale: Locale,
}

impl Mailer {
    pub fn from_config(smtp: &Smtp) -> Result<Mailer, String> {
        let from: Mailbox = smtp.from.parse().map_err(|e| format!("smtp.from {:?}: {e}", smtp.from))?;
        let mut builder = if smtp.starttls {
            AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&smtp.host)
                .map_err(|e| format!("smtp.host: {e}"))?
                .tls(Tls::Required(tls_parameters(&smtp.host)?))
        } else {
            AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&smtp.host)
        }
        .port(smtp.port)
        .timeout(Some(std::time::Duration::from_secs(15)));
        if let Some(user) = &smtp.username {
            let password = match &smtp.password_file {
                Some(p) => std::fs::read_to_string(p)
                    .map_err(|e| format!("smtp.password_file {}: {e}", p.display()))?
                    .trim()
                    .to_owned(),
                None => return Err("smtp.username needs smtp.password_file".into()),
            };
            builder = builder.credentials(Credentials::new(user.clone(), password));
        }
        Ok(Mailer { transport: builder.build(), from })
    }

    pub async fn send(&self, invite: &Invite<'_>) -> Result<(), String> {
        let tr = Tr(invite.locale);
        let tenant = [("tenant", invite.tenant)];
        let (subject, lead) = if invite.recovery {
            (tr.with("mail-recover-subject", &tenant), tr.t("mail-recover-lead"))
        } else {
            (tr.with("mail-invite-subject", &tenant), tr.t("mail-invite-lead"))
        };
        let hello = tr.with("mail-hello", &[("name", invite.name)]);
        let body = format!("{hello}\n\n{lead}\n\n{}\n\n{}\n", invite.url, tr.t("mail-once"));
        self.deliver(invite.name, invite.email, subject, body).await
    }

    pub async fn send_link_notice(&self, n: &LinkNotice<'_>) -> Result<(), String> {
        let tr = Tr(n.locale);
        let vars = [
            ("tenant", n.tenant),
            ("provider", n.provider),
            ("account", n.account),
            ("url", n.account_url),
            ("name", n.name),
        ];
        let subject = tr.with("mail-link-subject", &vars);
        let body = format!(
            "{}\n\n{}\n\n{}\n",
            tr.with("mail-hello", &vars),
            tr.with("mail-link-body", &vars),
            tr.with("mail-link-warning", &vars)
        );
        self.deliver(n.name, n.email, subject, body).await
    }

    async fn deliver(&self, name: &str, email: &str, subject: String, body: String) -> Result<(), String> {
        let to: Mailbox = format!("{} <{}>", name.replace(['<', '>', '"'], ""), email)
            .parse()
            .map_err(|e| format!("address {email}: {e}"))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(subject)
            .header(ContentType::TEXT_PLAIN)
            .body(body)
            .map_err(|e| e.to_string())?;
        self.transport.send(message).await.map(|_| ()).map_err(|e| e.to_string())
    }
}

/// STARTTLS towards `host`, verified against the system's trust store: the roots PostgreSQL and
/// the identity providers are checked against too (`store::trust`).
fn tls_parameters(host: &str) -> Result<TlsParameters, String> {
    let mut params = TlsParameters::builder(host.to_owned()).certificate_store(CertificateStore::None);
    for root in crate::store::trust::system_roots() {
        if let Ok(cert) = Certificate::from_der(root.to_vec()) {
            params = params.add_root_certificate(cert);
        }
    }
    params.build_rustls().map_err(|e| format!("smtp.host {host}: TLS: {e}"))
}

/// E-mails the invitations (eight at a time) when a mailer is configured (`[smtp]`), noting per
/// row whether it worked. The invitations are already stored: a failure loses nothing.
pub async fn send_invitations(mailer: Option<Arc<Mailer>>, tenant_name: &str, invited: &mut [InvitedRow]) {
    let Some(mailer) = mailer else { return };
    // Owned data per message: the futures must not borrow across the concurrent stream.
    let jobs: Vec<(usize, String, String, String, Locale)> = invited
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let locale = v.locale.as_deref().and_then(Locale::parse).unwrap_or_default();
            (i, v.email.clone(), v.name.clone(), v.invite_url.clone(), locale)
        })
        .collect();
    let tenant = tenant_name.to_owned();
    let results: Vec<(usize, Result<(), String>)> = futures_util::stream::iter(jobs)
        .map(|(i, email, name, url, locale)| {
            let (tenant, mailer) = (tenant.clone(), mailer.clone());
            async move {
                let invite = Invite { tenant: &tenant, email: &email, name: &name, url: &url, recovery: false, locale };
                (i, mailer.send(&invite).await)
            }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    for (i, r) in results {
        invited[i].emailed = Some(r.is_ok());
        invited[i].email_error = r.err();
    }
}
